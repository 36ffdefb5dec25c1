import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

export type { components, operations, paths };
/** Receivers of webhooks: the server's own verifier (node:crypto only). */
export {
  verifyLegacyWebhookSignature,
  verifyWebhook,
  type VerifyWebhookOptions,
  type VerifyWebhookResult,
} from '../../../src/webhooks/verifyWebhook.js';

export type Schemas = components['schemas'];
/** Every error code the API answers (the document's `ErrorCode`). */
export type ErrorCode = Schemas['ErrorCode'];
type ErrorEnvelope = Schemas['ApiError'];

/** An error answer of the API: its status and the envelope's code, requestId and details. */
export class SvcApiError extends Error {
  readonly status: number;
  /** The envelope's code; `unexpected_response` when the answer was not the API's envelope (a proxy's page…). */
  readonly code: ErrorCode | 'unexpected_response';
  readonly requestId: string | undefined;
  readonly details: Record<string, unknown>;
  readonly response: Response;

  constructor(response: Response, body: unknown) {
    const e = (body as Partial<ErrorEnvelope> | undefined)?.error;
    super(e?.message ?? `HTTP ${response.status}`);
    this.name = 'SvcApiError';
    this.status = response.status;
    this.code = e?.code ?? 'unexpected_response';
    this.requestId = e?.requestId ?? response.headers.get('x-request-id') ?? undefined;
    this.details = e?.details ?? {};
    this.response = response;
  }
}

export interface RetryOptions {
  /** Attempts in all, the first included (default 3; 1 turns retrying off). */
  maxAttempts?: number;
  /** A Retry-After longer than this is not waited for: the answer is returned (default 60). */
  maxDelaySeconds?: number;
  /** How to wait (tests inject their own). */
  sleep?: (ms: number) => Promise<void>;
}

export interface SvcClientOptions {
  /** The server's address, e.g. `https://api.example.com` (the paths carry `/v1`). */
  baseUrl: string;
  /** An API key (`svc_live_…`, `svc_test_…`), sent as `Authorization: Bearer`. */
  apiKey?: string;
  /** An OAuth access token (`svc_at_…`) for the `/v1` resource, or a function that returns a fresh one. */
  accessToken?: string | (() => string | Promise<string>);
  /** Writes without an `Idempotency-Key` get one from this (default `crypto.randomUUID`). */
  idempotencyKey?: () => string;
  retry?: RetryOptions;
  /** The fetch to use (default `globalThis.fetch`). */
  fetch?: (request: Request) => Promise<Response>;
}

const WRITES = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);
const RETRIED = new Set([429, 503]);

/** Seconds to wait from a Retry-After header (seconds or an HTTP date), or undefined without one. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * A fetch that retries 429 and 503 answers which carry Retry-After, waiting as told, at most `maxAttempts` times.
 * A 429 without Retry-After (monthly units exhausted) is returned at once: waiting would not help. Writes are
 * safe to retry: each carries its Idempotency-Key, and a 429 or 503 did nothing.
 */
function retryingFetch(base: (r: Request) => Promise<Response>, o: RetryOptions = {}) {
  const maxAttempts = Math.max(1, o.maxAttempts ?? 3);
  const maxDelay = o.maxDelaySeconds ?? 60;
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  return async (request: Request): Promise<Response> => {
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= maxAttempts;
      const res = await base(last ? request : request.clone());
      if (last || !RETRIED.has(res.status)) return res;
      const wait = retryAfterSeconds(res.headers.get('retry-after'));
      if (wait === undefined || wait > maxDelay) return res;
      await res.body?.cancel();
      await sleep(wait * 1000);
    }
  };
}

/** Paths of the list operations (`{ data, nextCursor }` answers). */
export type ListPath = {
  [P in keyof paths]: paths[P] extends {
    get: { responses: { 200: { content: { 'application/json': { data: unknown[]; nextCursor: string | null } } } } };
  }
    ? P
    : never;
}[keyof paths];
type ListOperation<P extends ListPath> = paths[P]['get'];
/** One item of a list operation's `data`. */
export type ListItem<P extends ListPath> =
  ListOperation<P>['responses'][200]['content']['application/json']['data'][number];
/** The parameters of a list operation, without the cursor (the iterator carries it). */
export type ListParams<P extends ListPath> = (ListOperation<P>['parameters'] extends { path: infer Path }
  ? { path: Path }
  : { path?: never }) & {
  query?: Omit<NonNullable<ListOperation<P>['parameters']['query']>, 'cursor'>;
};

export interface UploadOptions {
  filename: string;
  /** The media type stored with the file (default application/octet-stream). */
  contentType?: string;
  messageId?: string;
  taskId?: string;
  idempotencyKey?: string;
}

export interface SvcClient {
  /** The openapi-fetch client: every operation, typed from the document; answers are `{ data, error, response }`. */
  api: Client<paths>;
  /** The data of a success, or throws SvcApiError. */
  unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T>;
  /** Every item of a list, page after page (following nextCursor), as an async iterator. */
  paginate<P extends ListPath>(path: P, params: ListParams<P>): AsyncGenerator<ListItem<P>, void, undefined>;
  /** Uploads bytes (a Blob or a Uint8Array) to a room, optionally attached to a message or a task. */
  uploadFile(roomId: string, bytes: Blob | Uint8Array, o: UploadOptions): Promise<Schemas['FileMetadata']>;
  /** Downloads a file's bytes, with the media type stored at upload. */
  downloadFile(roomId: string, fileId: string): Promise<{ bytes: Uint8Array; contentType: string }>;
}

/** The typed client of the svc REST API. */
export function createSvcClient(o: SvcClientOptions): SvcClient {
  const api = createClient<paths>({
    baseUrl: o.baseUrl,
    fetch: retryingFetch(o.fetch ?? ((r) => globalThis.fetch(r)), o.retry),
  });
  const newKey = o.idempotencyKey ?? (() => crypto.randomUUID());
  const auth: Middleware = {
    async onRequest({ request }) {
      const token = o.apiKey ?? (typeof o.accessToken === 'function' ? await o.accessToken() : o.accessToken);
      if (token && !request.headers.has('authorization')) request.headers.set('Authorization', `Bearer ${token}`);
      // one key per call, set before the first attempt so that every retry carries the same one
      if (WRITES.has(request.method) && !request.headers.has('idempotency-key'))
        request.headers.set('Idempotency-Key', newKey());
      return request;
    },
  };
  api.use(auth);

  async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
    const { data, error, response } = await call;
    if (!response.ok) throw new SvcApiError(response, error);
    return data as T;
  }

  async function* paginate<P extends ListPath>(
    path: P,
    params: ListParams<P>,
  ): AsyncGenerator<ListItem<P>, void, undefined> {
    const p = params as { path?: Record<string, string>; query?: Record<string, unknown> };
    let cursor: string | undefined;
    do {
      const get = api.GET as unknown as (
        url: string,
        init: object,
      ) => Promise<{ data?: { data: ListItem<P>[]; nextCursor: string | null }; error?: unknown; response: Response }>;
      const page = await unwrap(
        get(path, { params: { path: p.path, query: { ...p.query, ...(cursor ? { cursor } : {}) } } }),
      );
      yield* page.data;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }

  async function uploadFile(roomId: string, bytes: Blob | Uint8Array, u: UploadOptions) {
    return unwrap(
      api.POST('/v1/rooms/{roomId}/files', {
        params: { path: { roomId }, query: { filename: u.filename, messageId: u.messageId, taskId: u.taskId } },
        headers: {
          'Content-Type': u.contentType ?? 'application/octet-stream',
          ...(u.idempotencyKey ? { 'Idempotency-Key': u.idempotencyKey } : {}),
        },
        body: bytes,
        bodySerializer: (b) => b,
      }),
    );
  }

  async function downloadFile(roomId: string, fileId: string) {
    const { error, response, data } = await api.GET('/v1/rooms/{roomId}/files/{fileId}/content', {
      params: { path: { roomId, fileId } },
      parseAs: 'arrayBuffer',
    });
    if (!response.ok || !data) throw new SvcApiError(response, error);
    return {
      bytes: new Uint8Array(data),
      contentType: response.headers.get('content-type') ?? 'application/octet-stream',
    };
  }

  return { api, unwrap, paginate, uploadFile, downloadFile };
}
