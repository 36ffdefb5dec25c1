import { actorUser, clientById, grantById, isMember, organizationPlan } from '../../db/stores/oauth.js';
import type { AuthenticatedActor } from '../domain/actor.js';
import type { Services } from '../domain/services.js';
import { ACCESS_TOKEN_PREFIX } from './constants.js';
import { grantActor } from './grantActor.js';
import { resolveDelegatedToken } from './resolveDelegatedToken.js';
import { findToken } from './tokenStore.js';

/**
 * Turns an `svc_at_` access token into an Actor (the runtime sets it as `Services.resolveAccessToken`):
 * `agent` for clients registered with `--kind agent`, else `user`; `userId` is the consenting user, whose
 * permissions bound every request; `organizationId` is the acting context chosen at consent (null for the
 * personal scope), which also decides the billing entity and plan; `audience` is the token's resource;
 * `user` is the consenting user's profile.
 * Null (→ 401) when the token is unknown, expired or revoked, its grant is revoked, or the user has left
 * the organization.
 */
export async function resolveAccessToken(s: Services, value: string): Promise<AuthenticatedActor | null> {
  if (!value.startsWith(ACCESS_TOKEN_PREFIX)) return null;
  const m = s.ds.manager;
  const token = await findToken(m, value);
  if (!token || token.kind !== 'access' || token.revokedAt || Date.parse(token.expiresAt) <= s.now().getTime())
    return null;
  const grant = await grantById(m, token.grantId);
  if (!grant || grant.revokedAt) return null;
  // an agent run's delegated token: its own rules, no OAuth client behind it
  if (token.agentRunId) return resolveDelegatedToken(s, token, grant);
  const [client, user] = await Promise.all([clientById(m, grant.clientId), actorUser(m, grant.userId)]);
  if (!client || !user) return null;
  let plan = 'default';
  if (grant.organizationId) {
    if (!(await isMember(m, grant.userId, grant.organizationId))) return null;
    plan = await organizationPlan(m, grant.organizationId);
  }
  return grantActor(client.kind === 'agent' ? 'agent' : 'user', token, grant, user, plan);
}
