import type { OAuthGrant, OAuthToken } from '../../db/entities/index.js';
import { actorUser, organizationPlan } from '../../db/stores/oauth.js';
import { runStanding } from '../../db/stores/agentRuns.js';
import { inTransaction } from '../../db/transaction.js';
import type { AuthenticatedActor } from '../domain/actor.js';
import { endRunsOfRevokedStarters } from '../domain/runEnd.js';
import type { Services } from '../domain/services.js';
import { grantActor } from './grantActor.js';

/** Run states in which a run's delegated token works: it stops the moment the run ends. */
const LIVE_RUN = new Set(['queued', 'running']);

/**
 * The actor of an agent run's delegated token: `agent`, acting for the delegating
 * human (`grant.userId`) in the run's organization, with the token's scopes (the invoker's ∩ the
 * connector's, fixed at the run's creation), restricted to the run's room and stamped with the run id.
 * Null (→ 401) once the run has ended (whatever the token's own expiry says), and when the credential that
 * started the run no longer stands: its API key or OAuth token revoked, the human gone from the
 * organization. The run then ends here (`credential_revoked`), so its list shows it ended. The human's room
 * rights are not copied here: `requireRoom` reads them from the database on every request.
 */
export async function resolveDelegatedToken(
  s: Services,
  token: OAuthToken,
  grant: OAuthGrant,
): Promise<AuthenticatedActor | null> {
  const m = s.ds.manager;
  if (!token.agentRunId || !token.roomId || !grant.organizationId) return null;
  const [run, user] = await Promise.all([runStanding(s.ds, token.agentRunId), actorUser(m, grant.userId)]);
  if (!run || !LIVE_RUN.has(run.status) || run.roomId !== token.roomId || run.userId !== grant.userId) return null;
  if (run.revoked || !user) {
    const ended = await inTransaction(s, (tx) => endRunsOfRevokedStarters(tx, s.now(), { runId: run.id }));
    if (ended.length)
      s.log.info(
        { agentRunId: run.id, revoked: run.revoked ?? 'user' },
        'agent run canceled: the credential that started it no longer stands',
      );
    return null;
  }
  const plan = await organizationPlan(m, grant.organizationId);
  return grantActor('agent', token, grant, user, plan, { roomId: token.roomId, agentRunId: run.id });
}
