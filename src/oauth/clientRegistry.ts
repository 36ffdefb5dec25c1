import type { EntityManager } from 'typeorm';
import type { OAuthClient } from '../../db/entities/index.js';
import { allClients, insertClient } from '../../db/stores/oauth.js';
import { inTransaction } from '../../db/transaction.js';
import type { Services } from '../domain/services.js';
import { validationError } from '../domain/errors.js';
import { randomToken, sha256Hex } from '../domain/hashing.js';
import { newId } from '../domain/ids.js';
import { SCOPES } from '../domain/scopes.js';
import { iso } from '../domain/time.js';
import { CLIENT_SECRET_PREFIX } from './constants.js';

export interface CreateClientOptions {
  name: string;
  redirectUris: string[];
  type: 'public' | 'confidential';
  kind?: 'app' | 'agent';
  /** Scopes the client may request; default every scope. */
  scopes?: string[];
}

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]']);
const isLoopback = (host: string) => LOOPBACK_HOSTS.has(host) || /^127(\.\d{1,3}){3}$/.test(host);

/**
 * Why `uri` can't be a redirect URI, or null when it can: an absolute https URI, or http on a loopback host
 * (RFC 8252 §7.3), without a fragment or user info. URIs are later matched by exact string comparison.
 */
export function redirectUriProblem(uri: string): string | null {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return 'is not an absolute URI';
  }
  if (u.hash || uri.includes('#')) return 'must not have a fragment';
  if (u.username || u.password) return 'must not carry user info';
  if (u.protocol === 'https:') return null;
  if (u.protocol === 'http:' && isLoopback(u.hostname)) return null;
  return 'must be https, or http on a loopback host (localhost, 127.0.0.1, [::1])';
}

/**
 * Registers a client (only an administrator does, through `svc client create`). A confidential
 * client's secret is returned here once; only its SHA-256 is stored (it is 256 random bits, so a fast hash
 * is enough).
 */
export async function createClient(
  m: EntityManager,
  now: Date,
  o: CreateClientOptions,
): Promise<{ client: OAuthClient; clientSecret: string | null }> {
  if (!o.name.trim()) throw validationError('Name must not be empty', { field: 'name' });
  if (!o.redirectUris.length) throw validationError('At least one redirect URI is required', { field: 'redirectUris' });
  for (const uri of o.redirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw validationError(`Redirect URI ${uri} ${problem}`, { field: 'redirectUris', uri });
  }
  const scopes = o.scopes ?? [...SCOPES];
  const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length || !scopes.length) throw validationError('Unknown or empty scopes', { field: 'scopes', unknown });
  const clientSecret = o.type === 'confidential' ? randomToken(CLIENT_SECRET_PREFIX, 32) : null;
  const client = await insertClient(m, {
    id: newId('cli', now.getTime()),
    name: o.name.trim(),
    type: o.type,
    kind: o.kind ?? 'app',
    redirectUris: [...new Set(o.redirectUris)],
    scopes: [...new Set(scopes)],
    secretHash: clientSecret ? sha256Hex(clientSecret) : null,
    createdAt: iso(now),
  });
  return { client, clientSecret };
}

/** Loopback IP literals a redirect_uri may present on any port (RFC 8252 §7.3, OAuth 2.1 §8.4.2). */
const ANY_PORT_HOSTS = new Set(['127.0.0.1', '[::1]']);

/**
 * Whether a presented redirect_uri matches one registered for the client: exact string comparison, except
 * that an `http` URI presented on `127.0.0.1` or `[::1]` matches any registered `http` loopback URI (`localhost`,
 * `127.x.y.z`, `[::1]`) with the same path and query, on any port: a native app listens on an ephemeral port and
 * whichever IP version it can bind (RFC 8252 §7.3), and an IP literal reaches only the user's own machine, which
 * a `localhost` registration names too. A presented `localhost` stays exact: its name can resolve elsewhere (§8.3).
 */
export function redirectUriMatches(registered: readonly string[], presented: string): boolean {
  if (registered.includes(presented)) return true;
  let p: URL;
  try {
    p = new URL(presented);
  } catch {
    return false;
  }
  if (
    p.protocol !== 'http:' ||
    !ANY_PORT_HOSTS.has(p.hostname) ||
    p.href !== presented ||
    p.username ||
    p.password ||
    presented.includes('#') // an empty fragment too, which URL.hash reports as ''
  )
    return false;
  return registered.some((r) => {
    if (!URL.canParse(r)) return false;
    const u = new URL(r);
    return u.protocol === 'http:' && isLoopback(u.hostname) && u.pathname === p.pathname && u.search === p.search;
  });
}

/** `createClient` in a transaction of its own (the operator's `svc client create`). */
export const registerClient = (s: Services, o: Parameters<typeof createClient>[2]) =>
  inTransaction(s, (m) => createClient(m, s.now(), o));

/** Every registered client, oldest first. */
export const listClients = (s: Services): Promise<OAuthClient[]> => allClients(s.ds.manager);
