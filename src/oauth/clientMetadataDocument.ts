import { Agent, request } from 'undici';
import type { Services } from '../domain/services.js';
import { ConcurrencyGate } from '../outbound/concurrencyGate.js';
import {
  allowlistOf,
  checkOutboundUrl,
  pinnedLookup,
  type Resolver,
  systemResolver,
  UrlRefusedError,
} from '../outbound/ssrfGuard.js';
import { redirectUriProblem } from './clientRegistry.js';
import {
  ACCEPT_HEADER,
  CACHE_CONTROL_IN,
  CONTENT_LENGTH_IN,
  CONTENT_TYPE_IN,
  USER_AGENT_HEADER,
} from '../http/headers.js';

/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document; MCP authorization 2025-11-25):
 * a client whose `client_id` is an https URL publishes its metadata at that URL. The authorization server
 * fetches it through the webhook SSRF guard (only the checked address is connected to), with a size limit,
 * a time limit, no redirects, and caches a valid document in memory for its Cache-Control max-age bounded
 * to [5 min, 24 h]. Since /oauth/authorize needs no sign-in, anyone can make the server fetch any path under
 * an approved origin: a failed fetch or an invalid document is remembered for 30 s (asked again meanwhile, the
 * same error without a fetch), requests for a URL being fetched share that fetch, and at most 2 fetches per
 * origin and 8 in all run at once (beyond them the request is refused at once, never queued).
 */

/** At most this many bytes of a document are read (the draft suggests 5 KB). */
export const MAX_DOCUMENT_BYTES = 5 * 1024;
export const MIN_CACHE_S = 5 * 60;
export const MAX_CACHE_S = 24 * 60 * 60;
/** Entries kept in the cache of one process (and as many failures); the oldest goes first. */
const MAX_CACHED = 500;

/** A validated document: what the server uses of it. */
export interface ClientMetadata {
  clientId: string;
  clientName: string;
  redirectUris: string[];
  logoUri: string | null;
}

/** Why a document could not be used; the message is shown on the error page (it names no internal address). */
export class ClientMetadataError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClientMetadataError';
  }
}

/** What tests and embedders may replace: DNS, extra trusted CAs, the time limits. */
export interface ClientMetadataFetchDeps {
  resolver: Resolver;
  /** Extra CA certificates (PEM) trusted for these fetches besides the system's. */
  ca?: string[];
  connectTimeoutMs: number;
  /** The whole fetch, headers and body. */
  totalTimeoutMs: number;
  /** Fetches running at once for one origin, and in all. */
  maxFetchesPerOrigin: number;
  maxFetches: number;
  /** How long a failed fetch's error is answered without fetching again. */
  failureCacheMs: number;
}

const DEFAULT_DEPS: ClientMetadataFetchDeps = {
  resolver: systemResolver,
  connectTimeoutMs: 3000,
  totalTimeoutMs: 5000,
  maxFetchesPerOrigin: 2,
  maxFetches: 8,
  failureCacheMs: 30_000,
};

const overrides = new WeakMap<Services, Partial<ClientMetadataFetchDeps>>();
const depsOf = (s: Services): ClientMetadataFetchDeps => ({ ...DEFAULT_DEPS, ...overrides.get(s) });

/** What one runtime remembers of documents: valid ones, recent failures, fetches under way, and the caps. */
interface FetchState {
  documents: Map<string, { doc: ClientMetadata; expiresAt: number }>;
  failures: Map<string, { message: string; expiresAt: number }>;
  inFlight: Map<string, Promise<ClientMetadata>>;
  gate: ConcurrencyGate;
}
const states = new WeakMap<Services, FetchState>();

/** Replaces parts of the fetch deps for one runtime (tests: a resolver without DNS, a test CA, short timeouts). */
export function configureClientMetadataFetch(s: Services, deps: Partial<ClientMetadataFetchDeps>): void {
  overrides.set(s, { ...overrides.get(s), ...deps });
}

function stateOf(s: Services): FetchState {
  let st = states.get(s);
  if (!st) {
    const gate = new ConcurrencyGate(() => {
      const d = depsOf(s);
      return { perKey: d.maxFetchesPerOrigin, total: d.maxFetches };
    });
    states.set(s, (st = { documents: new Map(), failures: new Map(), inFlight: new Map(), gate }));
  }
  return st;
}

/** Sets a bounded cache's entry, the oldest entry leaving when it is full. */
function remember<V>(cache: Map<string, V>, key: string, value: V): void {
  cache.delete(key);
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
  cache.set(key, value);
}

/**
 * The cache lifetime of a response, in seconds; null when it must not be stored (no-store, no-cache, private is fine).
 */
export function cacheSeconds(cacheControl: string | undefined): number | null {
  const directives = (cacheControl ?? '')
    .toLowerCase()
    .split(',')
    .map((d) => d.trim());
  if (directives.includes('no-store') || directives.includes('no-cache')) return null;
  const maxAge = directives.map((d) => /^(?:s-)?max-age\s*=\s*"?(\d+)"?$/.exec(d)).find(Boolean);
  const seconds = maxAge ? Number(maxAge[1]) : MIN_CACHE_S;
  return Math.min(MAX_CACHE_S, Math.max(MIN_CACHE_S, seconds));
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** Validates a parsed document against its URL (draft §4.1, MCP: a public client). Throws ClientMetadataError. */
export function validateClientMetadata(url: string, body: unknown): ClientMetadata {
  const bad = (m: string) => new ClientMetadataError(`The client metadata document at ${url} is invalid: ${m}.`);
  if (!isObject(body)) throw bad('it is not a JSON object');
  if (body.client_id !== url) throw bad('its client_id is not exactly the URL it was fetched from');
  if (typeof body.client_name !== 'string' || !body.client_name.trim()) throw bad('client_name is missing');
  if (body.client_name.length > 200) throw bad('client_name is longer than 200 characters');
  if (!Array.isArray(body.redirect_uris) || !body.redirect_uris.length) throw bad('redirect_uris is missing or empty');
  if (body.redirect_uris.length > 20) throw bad('redirect_uris has more than 20 entries');
  for (const uri of body.redirect_uris) {
    if (typeof uri !== 'string') throw bad('redirect_uris holds a value that is not a string');
    const problem = redirectUriProblem(uri);
    if (problem) throw bad(`redirect URI ${uri} ${problem}`);
  }
  if (body.token_endpoint_auth_method !== 'none')
    throw bad('token_endpoint_auth_method must be "none" (a public client)');
  if ('client_secret' in body || 'client_secret_expires_at' in body) throw bad('it must not hold a client_secret');
  if (
    body.grant_types !== undefined &&
    !(Array.isArray(body.grant_types) && body.grant_types.includes('authorization_code'))
  ) {
    throw bad('grant_types must include authorization_code');
  }
  if (
    body.response_types !== undefined &&
    !(Array.isArray(body.response_types) && body.response_types.includes('code'))
  ) {
    throw bad('response_types must include code');
  }
  let logoUri: string | null = null;
  if (body.logo_uri !== undefined) {
    const ok =
      typeof body.logo_uri === 'string' && URL.canParse(body.logo_uri) && new URL(body.logo_uri).protocol === 'https:';
    if (!ok) throw bad('logo_uri must be an https URL');
    logoUri = body.logo_uri as string;
  }
  return {
    clientId: url,
    clientName: body.client_name.trim(),
    redirectUris: [...new Set(body.redirect_uris as string[])],
    logoUri,
  };
}

/** Reads at most `limit` bytes of a body; throws when there is more. */
async function readBounded(
  body: AsyncIterable<Buffer> & { destroy(): void },
  limit: number,
  url: string,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      throw new ClientMetadataError(`The client metadata document at ${url} is larger than ${limit} bytes.`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * One fetch of a document, validated; throws ClientMetadataError with what went wrong. Returns its cache lifetime too.
 */
async function fetchDocument(s: Services, url: string): Promise<{ doc: ClientMetadata; cacheFor: number | null }> {
  const deps = depsOf(s);
  let target;
  try {
    target = await checkOutboundUrl(url, {
      allowlist: allowlistOf(s.config),
      resolver: deps.resolver,
      resolveTimeoutMs: deps.connectTimeoutMs,
    });
  } catch (err) {
    if (err instanceof UrlRefusedError)
      throw new ClientMetadataError(`The client metadata document at ${url} cannot be fetched: ${err.message}.`);
    throw err;
  }
  if (!target)
    throw new ClientMetadataError(
      `The client metadata document at ${url} cannot be fetched: its host does not resolve.`,
    );
  const agent = new Agent({
    connect: {
      timeout: deps.connectTimeoutMs,
      lookup: pinnedLookup(target) as never,
      ...(deps.ca ? { ca: deps.ca } : {}),
    },
    headersTimeout: deps.totalTimeoutMs,
    bodyTimeout: deps.totalTimeoutMs,
    connections: 1,
    pipelining: 0,
  });
  const ac = new AbortController();
  let timedOut = false;
  const deadline = setTimeout(() => {
    timedOut = true;
    ac.abort();
  }, deps.totalTimeoutMs);
  try {
    // undici's request() follows no redirect
    const res = await request(target.url, {
      method: 'GET',
      dispatcher: agent,
      signal: ac.signal,
      headers: { [ACCEPT_HEADER]: 'application/json', [USER_AGENT_HEADER]: 'svc-authorization-server' },
    });
    // a body given up on (destroyed) reports an abort error: it is expected, never an uncaught exception
    res.body.on('error', () => undefined);
    if (res.statusCode >= 300 && res.statusCode < 400) {
      res.body.destroy();
      throw new ClientMetadataError(
        `The client metadata document at ${url} redirects (HTTP ${res.statusCode}); redirects are not followed.`,
      );
    }
    if (res.statusCode !== 200) {
      res.body.destroy();
      throw new ClientMetadataError(
        `The client metadata document at ${url} could not be fetched: HTTP ${res.statusCode}.`,
      );
    }
    const type = String(res.headers[CONTENT_TYPE_IN] ?? '')
      .split(';')[0]
      .trim()
      .toLowerCase();
    if (type !== 'application/json') {
      res.body.destroy();
      throw new ClientMetadataError(
        `The client metadata document at ${url} is not application/json (${type || 'no Content-Type'}).`,
      );
    }
    const declared = Number(res.headers[CONTENT_LENGTH_IN]);
    if (Number.isFinite(declared) && declared > MAX_DOCUMENT_BYTES) {
      res.body.destroy();
      throw new ClientMetadataError(
        `The client metadata document at ${url} is larger than ${MAX_DOCUMENT_BYTES} bytes.`,
      );
    }
    const raw = await readBounded(res.body as never, MAX_DOCUMENT_BYTES, url);
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new ClientMetadataError(`The client metadata document at ${url} is not valid JSON.`);
    }
    const cc = res.headers[CACHE_CONTROL_IN];
    return { doc: validateClientMetadata(url, parsed), cacheFor: cacheSeconds(Array.isArray(cc) ? cc.join(', ') : cc) };
  } catch (err) {
    if (err instanceof ClientMetadataError) throw err;
    if (
      timedOut ||
      ['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'].includes(
        (err as { code?: string }).code ?? '',
      )
    ) {
      throw new ClientMetadataError(
        `The client metadata document at ${url} did not arrive within ${deps.totalTimeoutMs / 1000} s.`,
      );
    }
    s.log.info({ err, url }, 'client metadata document fetch failed');
    throw new ClientMetadataError(`The client metadata document at ${url} is unreachable.`);
  } finally {
    clearTimeout(deadline);
    agent.destroy().catch(() => undefined);
  }
}

/**
 * The validated document of a client-id URL: from the in-memory cache while fresh, else fetched (and
 * cached when the response allows). Throws ClientMetadataError: the fetch's problem (remembered for
 * `failureCacheMs`, answered again meanwhile without a fetch), or that too many fetches run at once.
 */
export async function loadClientMetadata(s: Services, url: string): Promise<ClientMetadata> {
  const st = stateOf(s);
  const now = s.now().getTime();
  const hit = st.documents.get(url);
  if (hit && hit.expiresAt > now) return hit.doc;
  const failed = st.failures.get(url);
  if (failed && failed.expiresAt > now) throw new ClientMetadataError(failed.message);
  const running = st.inFlight.get(url);
  if (running) return running;

  const origin = new URL(url).origin;
  const release = st.gate.tryAcquire(origin);
  if (!release) {
    throw new ClientMetadataError(
      `The client metadata document at ${url} cannot be fetched now: too many client metadata documents are being fetched ` +
        `(from ${origin} or in all); try again in a few seconds.`,
    );
  }
  const fetching = (async () => {
    try {
      const { doc, cacheFor } = await fetchDocument(s, url);
      st.failures.delete(url);
      if (cacheFor !== null) remember(st.documents, url, { doc, expiresAt: now + cacheFor * 1000 });
      else st.documents.delete(url);
      return doc;
    } catch (err) {
      if (err instanceof ClientMetadataError)
        remember(st.failures, url, { message: err.message, expiresAt: now + depsOf(s).failureCacheMs });
      throw err;
    } finally {
      release();
      st.inFlight.delete(url);
    }
  })();
  st.inFlight.set(url, fetching);
  return fetching;
}
