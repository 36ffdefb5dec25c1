import { AgentRun, Membership, OAuthGrant, OAuthToken, Organization, User } from '../../db/entities/index.js';
import type { AuthenticatedActor } from '../domain/actor.js';
import type { Services } from '../domain/services.js';
import { ACTOR_USER_COLUMNS, grantActor } from './grantActor.js';

/** Run states in which a run's delegated token works (issue 21): it stops the moment the run ends. */
const LIVE_RUN = new Set(['queued', 'running']);

/**
 * The actor of an agent run's delegated token (issue 21, spec 5.2): `agent`, acting for the delegating
 * human (`grant.userId`) in the run's organization, with the token's scopes (the invoker's ∩ the
 * connector's, fixed at the run's creation), restricted to the run's room and stamped with the run id.
 * Null (→ 401) once the run has ended (whatever the token's own expiry says), or when the human has left
 * the organization. The human's room rights are not copied here: `requireRoom` reads them from the
 * database on every request.
 */
export async function resolveDelegatedToken(s: Services, token: OAuthToken, grant: OAuthGrant): Promise<AuthenticatedActor | null> {
  const m = s.ds.manager;
  if (!token.agentRunId || !token.roomId || !grant.organizationId) return null;
  const [run, user, membership] = await Promise.all([
    m.findOne(AgentRun, { where: { id: token.agentRunId }, select: { id: true, status: true, roomId: true, userId: true } }),
    m.findOne(User, { where: { id: grant.userId }, select: ACTOR_USER_COLUMNS }),
    m.countBy(Membership, { userId: grant.userId, organizationId: grant.organizationId }),
  ]);
  if (!run || !LIVE_RUN.has(run.status) || run.roomId !== token.roomId || run.userId !== grant.userId || !user || !membership) return null;
  const plan = (await m.findOneBy(Organization, { id: grant.organizationId }))?.plan ?? 'default';
  return grantActor('agent', token, grant, user, plan, { roomId: token.roomId, agentRunId: run.id });
}
