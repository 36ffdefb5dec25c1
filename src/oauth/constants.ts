/** Lifetimes of codes and access tokens, in milliseconds (docs/oauth.md#rules-that-hold). */
export const CODE_TTL_MS = 60_000;
export const ACCESS_TOKEN_TTL_MS = 60 * 60 * 1000;
/** Refresh tokens live 30 days counted from the family's start. */
export const REFRESH_FAMILY_TTL_MS = 30 * 24 * 60 * 60 * 1000;
/** A validated authorization request waits this long for sign-in and consent. */
export const AUTHORIZATION_REQUEST_TTL_S = 10 * 60;

export const ACCESS_TOKEN_PREFIX = 'svc_at_';
export const REFRESH_TOKEN_PREFIX = 'svc_rt_';
export const CLIENT_SECRET_PREFIX = 'svc_cs_';
