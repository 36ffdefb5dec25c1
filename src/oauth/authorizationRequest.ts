import { jwtVerify, SignJWT } from 'jose';
import type { OAuthClient } from '../../db/entities/index.js';
import { clientById } from '../../db/stores/oauth.js';
import type { Services } from '../domain/services.js';
import { signingKey } from '../signingKey.js';
import { redirectUriMatches } from './clientRegistry.js';
import { audienceOf as surfaceAudience, isAudience } from '../http/surfaces.js';
import { AUTHORIZATION_REQUEST_TTL_S } from './constants.js';
import {
  findClientById,
  isClientIdUrl,
  isMetadataClientRow,
  metadataClientRowId,
  resolveMetadataClient,
  ROW_ID_REFUSED,
} from './metadataClients.js';

/** A validated authorization request, carried signed from /oauth/authorize through sign-in to consent. */
export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  scopes: string[];
  state?: string;
  codeChallenge: string;
  resource: string;
  /** The client-id URL, for a Client ID Metadata Document client. */
  clientUrl?: string;
}

export type AuthorizationErrorCode =
  'invalid_request' | 'unsupported_response_type' | 'invalid_scope' | 'invalid_target';

/** What /oauth/authorize does with a request. */
export type ParsedAuthorization =
  /** client or redirect_uri unusable: an error page, never a redirect. */
  | { kind: 'page'; message: string }
  /** client and redirect_uri fine, the rest not: back to the client with an RFC 6749 §4.1.2.1 error. */
  | { kind: 'error'; redirectUri: string; state?: string; error: AuthorizationErrorCode; description: string }
  | { kind: 'ok'; client: OAuthClient; request: AuthorizationRequest };

type Query = Record<string, unknown>;

/** One parameter: its value, `undefined` when absent, `null` when repeated (RFC 6749 §3.1 forbids that). */
function one(q: Query, name: string): string | undefined | null {
  const v = q[name];
  if (v === undefined) return undefined;
  return typeof v === 'string' ? v : null;
}

const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/**
 * Validates an authorization request in the order that matters: client_id and redirect_uri
 * first (a client-id URL is resolved through its approved metadata document; redirect_uri matches exactly, a
 * loopback IP literal on any port), so nothing ever redirects to an unregistered address; then
 * response_type=code only, PKCE with S256 only, `resource` equal to BASE_URL/v1 or BASE_URL/mcp (RFC 8707),
 * and scopes: the asked ones the client may have (all of the client's scopes when `scope` is absent).
 */
export async function parseAuthorizationRequest(s: Services, q: Query): Promise<ParsedAuthorization> {
  const clientId = one(q, 'client_id');
  if (!clientId)
    return { kind: 'page', message: clientId === null ? 'client_id is repeated.' : 'client_id is missing.' };
  const redirectUri = one(q, 'redirect_uri');
  let client: OAuthClient | null;
  const clientUrl = isClientIdUrl(clientId) ? clientId : undefined;
  if (clientUrl) {
    const resolved = await resolveMetadataClient(s, clientUrl);
    if ('message' in resolved) return { kind: 'page', message: resolved.message };
    client = resolved.client;
  } else {
    client = await findClientById(s, clientId);
    if (!client)
      return {
        kind: 'page',
        message: isMetadataClientRow(clientId.toLowerCase()) ? ROW_ID_REFUSED : 'The client is not registered.',
      };
  }
  if (!redirectUri)
    return { kind: 'page', message: redirectUri === null ? 'redirect_uri is repeated.' : 'redirect_uri is missing.' };
  if (!redirectUriMatches(client.redirectUris, redirectUri)) {
    return {
      kind: 'page',
      message: clientUrl
        ? `redirect_uri does not match an address of the client metadata document at ${clientUrl}.`
        : 'redirect_uri does not exactly match an address registered for this client.',
    };
  }

  const state = one(q, 'state');
  const fail = (error: AuthorizationErrorCode, description: string): ParsedAuthorization => ({
    kind: 'error',
    redirectUri,
    state: state ?? undefined,
    error,
    description,
  });
  for (const name of ['state', 'response_type', 'scope', 'code_challenge', 'code_challenge_method', 'resource']) {
    if (one(q, name) === null) return fail('invalid_request', `${name} is repeated`);
  }
  const responseType = one(q, 'response_type');
  if (!responseType) return fail('invalid_request', 'response_type is required');
  if (responseType !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported');

  const challenge = one(q, 'code_challenge');
  const method = one(q, 'code_challenge_method');
  if (!challenge) return fail('invalid_request', 'code_challenge is required (PKCE with S256)');
  if (method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256; plain is not supported');
  if (!CHALLENGE.test(challenge))
    return fail('invalid_request', 'code_challenge must be the base64url SHA-256 of the code_verifier');

  const resource = one(q, 'resource');
  const { baseUrl } = s.config;
  const audiences = `${surfaceAudience(baseUrl, 'rest')} or ${surfaceAudience(baseUrl, 'mcp')}`;
  if (!resource) return fail('invalid_target', `resource is required: ${audiences}`);
  if (!isAudience(baseUrl, resource)) return fail('invalid_target', `resource must be ${audiences}`);

  const scopeParam = one(q, 'scope');
  const asked = scopeParam === undefined ? client.scopes : [...new Set((scopeParam ?? '').split(' ').filter(Boolean))];
  if (!asked.length) return fail('invalid_scope', 'scope is empty');
  // more than the client may have (scopes it was not registered with, or this server does not know, such as
  // offline_access): granted the allowed intersection (the token response's `scope` and the consent screen
  // say what was granted; RFC 6749 §3.3), refused only when nothing of it is allowed
  const granted = asked.filter((x) => client.scopes.includes(x));
  if (!granted.length) return fail('invalid_scope', `The client may not request: ${asked.join(' ')}`);

  return {
    kind: 'ok',
    client,
    request: {
      clientId: client.id,
      redirectUri,
      scopes: granted,
      state: state ?? undefined,
      codeChallenge: challenge,
      resource,
      ...(clientUrl ? { clientUrl } : {}),
    },
  };
}

const audienceOf = (s: Services) => `${s.config.baseUrl}/oauth/consent`;

/** Signs a validated request (10 minutes) so the consent step can trust it without storing it. */
export async function signAuthorizationRequest(s: Services, r: AuthorizationRequest): Promise<string> {
  const now = Math.floor(s.now().getTime() / 1000);
  return new SignJWT({ req: r })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(s.config.baseUrl)
    .setAudience(audienceOf(s))
    .setIssuedAt(now)
    .setExpirationTime(now + AUTHORIZATION_REQUEST_TTL_S)
    .sign(signingKey(s.secret, 'authorization-request'));
}

/**
 * The request a consent form carries, when its signature and lifetime hold and its client still has that
 * redirect_uri; else null (the consent step then shows an error page, never a redirect).
 */
export async function verifyAuthorizationRequest(
  s: Services,
  token: unknown,
): Promise<{ client: OAuthClient; request: AuthorizationRequest } | null> {
  if (typeof token !== 'string' || !token) return null;
  let request: AuthorizationRequest;
  try {
    const { payload } = await jwtVerify(token, signingKey(s.secret, 'authorization-request'), {
      algorithms: ['HS256'],
      issuer: s.config.baseUrl,
      audience: audienceOf(s),
      currentDate: s.now(),
    });
    request = payload.req as AuthorizationRequest;
  } catch {
    return null;
  }
  // a metadata-document client's request carries its URL, whose approvals the consent step reads
  if (
    isMetadataClientRow(request.clientId) &&
    (!request.clientUrl || metadataClientRowId(request.clientUrl) !== request.clientId)
  )
    return null;
  const client = await clientById(s.ds, request.clientId);
  if (!client || !redirectUriMatches(client.redirectUris, request.redirectUri)) return null;
  if (!request.scopes.every((x) => client.scopes.includes(x))) return null;
  return { client, request };
}

/** The client's redirect URI with the response parameters added, `iss` included (RFC 9207). */
export function redirectTo(s: Services, redirectUri: string, params: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...params, iss: s.config.baseUrl })) if (v !== undefined) query.append(k, v);
  // appended as text so the registered URI reaches the client unchanged (URL would normalize it)
  return `${redirectUri}${redirectUri.includes('?') ? '&' : '?'}${query}`;
}
