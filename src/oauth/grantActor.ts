import type { OAuthGrant, OAuthToken, User } from '../../db/entities/index.js';
import { type AuthenticatedActor, billingEntityOf } from '../domain/actor.js';

/**
 * The actor of an OAuth access token, once its grant, user and plan are known: the consenting user acting in
 * the grant's organization (or personal scope), with the token's scopes and audience. Both token resolvers
 * (an app's or agent client's token, an agent run's delegated token) build it here.
 */
export function grantActor(
  kind: AuthenticatedActor['kind'],
  token: OAuthToken,
  grant: OAuthGrant,
  user: Pick<User, 'email' | 'name' | 'locale' | 'createdAt'>,
  plan: string,
  extra: Pick<AuthenticatedActor, 'roomId' | 'agentRunId'> = {},
): AuthenticatedActor {
  return {
    kind,
    userId: grant.userId,
    organizationId: grant.organizationId,
    billingEntity: billingEntityOf(grant.userId, grant.organizationId),
    scopes: token.scopes,
    credential: { method: 'oauth_bearer', id: token.id },
    plan,
    clientId: grant.clientId,
    audience: grant.resource,
    ...extra,
    user: { email: user.email, name: user.name, locale: user.locale, createdAt: user.createdAt },
  };
}
