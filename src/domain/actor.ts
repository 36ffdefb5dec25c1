/** Who acts. For `agent` and `app`, `userId` is the human they act for. */
export type ActorKind = 'user' | 'app' | 'agent';

export interface Actor {
  kind: ActorKind;
  /** The human whose permissions bound the request: the key owner, the token's user, the delegating user. */
  userId: string;
  /** The organization the credential acts in; null for the individual context. */
  organizationId: string | null;
  /** `org:<id>` or `user:<id>`: who is billed API units. */
  billingEntity: string;
  scopes: string[];
  credential: { method: 'api_key' | 'oauth_bearer'; id: string };
  /** Plan whose limits apply. */
  plan: string;
  /** OAuth client id, for tokens. */
  clientId?: string;
  /** OAuth audience the token is pinned to. */
  audience?: string;
  /**
   * A delegated token of an agent run works in this one room only: `requireRoom` and every room
   * list see no other. Absent: no room restriction.
   */
  roomId?: string;
  /** The agent run a delegated token acts for: what it creates carries it, and so does its audit row. */
  agentRunId?: string;
}

/**
 * The profile of the user an API credential acts for (`userId`), read with the credential (what `GET /v1/me` shows).
 */
export interface UserProfile {
  email: string;
  name: string;
  locale: string;
  createdAt: string;
}

/**
 * An actor authenticated from an API credential (key or access token) in this request. The user's row is
 * read in the same statement or lookup as the credential (a credential whose user is gone fails), so the
 * profile is as fresh as the credential check itself.
 */
export interface AuthenticatedActor extends Actor {
  user: UserProfile;
}

export const billingEntityOf = (userId: string, organizationId: string | null): string =>
  organizationId ? `org:${organizationId}` : `user:${userId}`;
