import { UsageError } from '../command.js';
import { CONTENT_TYPE_IN } from '../../http/headers.js';

/**
 * Where `svc listen` / `svc trigger` reach the server: `--url` or SVC_URL (else BASE_URL, else localhost:3000), `--key`
 * or SVC_API_KEY.
 */
export interface RemoteTarget {
  baseUrl: string;
  key: string;
}

export function remoteTarget(args: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): RemoteTarget {
  const raw = (typeof args.url === 'string' && args.url) || env.SVC_URL || env.BASE_URL || 'http://localhost:3000';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--url must be an absolute http(s) URL, got ${JSON.stringify(raw.slice(0, 200))}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError('--url must be an http or https URL');
  const key = (typeof args.key === 'string' && args.key) || env.SVC_API_KEY;
  if (!key) throw new UsageError('an API key is required: --key svc_… or the SVC_API_KEY environment variable');
  return { baseUrl: url.toString().replace(/\/+$/, ''), key };
}

/** A failure talking to the server, as one line (the CLI prints `error: <message>` and exits 1). */
export class RemoteError extends Error {}

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

interface ErrorBody {
  error?: { code?: unknown; message?: unknown; details?: { required?: unknown } };
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim().slice(0, 300);

/** Calls the public API with the key; throws RemoteError with a one-line reason on anything but 2xx. */
export async function callApi<T = unknown>(
  t: RemoteTarget,
  method: string,
  path: string,
  body?: unknown,
  signal?: AbortSignal,
): Promise<ApiResponse<T>> {
  let res: Response;
  try {
    res = await fetch(t.baseUrl + path, {
      method,
      headers: {
        authorization: `Bearer ${t.key}`,
        accept: 'application/json',
        ...(body === undefined ? {} : { [CONTENT_TYPE_IN]: 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: 'manual',
      signal: signal ?? AbortSignal.timeout(30_000),
    });
  } catch (err) {
    if (signal?.aborted) throw err;
    throw unreachable(t, err);
  }
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  if (res.status >= 200 && res.status < 300) {
    if (text && parsed === null)
      throw new RemoteError(
        `unexpected answer from ${t.baseUrl}${path}: HTTP ${res.status} without JSON (is --url the svc server?)`,
      );
    return { status: res.status, headers: res.headers, body: parsed as T };
  }
  throw refusal(t, method, path, res.status, parsed);
}

/** The RemoteError for an answer that is not 2xx, from its parsed JSON body (null when it had none). */
export function refusal(t: RemoteTarget, method: string, path: string, status: number, parsed: unknown): RemoteError {
  const e = (parsed as ErrorBody | null)?.error;
  if (!e || typeof e.code !== 'string')
    return new RemoteError(`unexpected answer from ${t.baseUrl}${path}: HTTP ${status} (is --url the svc server?)`);
  if (status === 401) return new RemoteError(`the API key was refused (401 ${e.code}): ${oneLine(String(e.message))}`);
  if (e.code === 'insufficient_scope') {
    const required = Array.isArray(e.details?.required) ? e.details.required.join(', ') : 'a scope';
    return new RemoteError(`the API key lacks the scope ${required} (403 insufficient_scope); create a key with it`);
  }
  return new RemoteError(`${method} ${path} answered ${status} ${e.code}: ${oneLine(String(e.message))}`);
}

/** A network failure as one line: `cannot reach BASE: ECONNREFUSED`. */
export function unreachable(t: RemoteTarget, err: unknown): RemoteError {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return new RemoteError(`cannot reach ${t.baseUrl}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
}
