import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { CONTENT_LENGTH_IN, TRANSFER_ENCODING_IN } from './http/headers.js';

/**
 * Request bodies: how long a client may take to send one, how many one client may be sending at once, and
 * the one reader every surface uses (REST, MCP, the forms of the pages and of OAuth).
 *
 * A body read ends in one of four ways, and each surface answers each in its own form:
 * - the bytes (at most `limit` kept; `over` tells the limit was passed);
 * - `BodyTimeoutError` (408): the body did not arrive within the request's deadline (SVC_BODY_TIMEOUT_MS,
 *   counted from the request's arrival); the connection is closed after the answer;
 * - `BodyRefusedError` (429): the client already has SVC_MAX_PENDING_BODIES bodies in flight; the
 *   connection is closed after the answer;
 * - `ClientGoneError`: the client closed or reset the connection mid-body. There is nobody to answer: the
 *   surface ends the request quietly (`endForGoneClient`), and never lets this error escape unhandled.
 */

export class BodyTimeoutError extends Error {
  readonly status = 408;
  constructor(readonly timeoutMs: number) {
    super(`The request body did not arrive within ${timeoutMs} ms`);
    this.name = 'BodyTimeoutError';
  }
}

export class BodyRefusedError extends Error {
  readonly status = 429;
  constructor(readonly limit: number) {
    super(`Too many request bodies in flight from this client (at most ${limit})`);
    this.name = 'BodyRefusedError';
  }
}

export class ClientGoneError extends Error {
  constructor(cause?: unknown) {
    super('The client closed the connection before its request body ended', { cause });
    this.name = 'ClientGoneError';
  }
}

/** Ends a request whose client is gone: nothing can be answered, so the socket is released at once. */
export function endForGoneClient(res: ServerResponse): void {
  res.destroy();
}

const STATE = Symbol('svc.requestBody');

/** What the body guard knows of a request's body (set on the request by `createBodyGuard`). */
interface BodyState {
  timeoutMs: number;
  limit: number;
  timedOut: boolean;
  refused: boolean;
}

/** The reader waiting for a body still arriving (`readLimited`), told by the guard of a refusal or the deadline. */
const READER = Symbol('svc.bodyReader');
type Guarded = IncomingMessage & { [STATE]?: BodyState; [READER]?: (err: Error) => void };

/** Whether the request announces a body (RFC 9112 §6.3: Content-Length above 0, or Transfer-Encoding). */
const announcesBody = (req: IncomingMessage) =>
  req.headers[TRANSFER_ENCODING_IN] !== undefined ||
  (req.headers[CONTENT_LENGTH_IN] !== undefined && req.headers[CONTENT_LENGTH_IN] !== '0');

export interface BodyGuardOptions {
  /** SVC_BODY_TIMEOUT_MS: the time a client has, from its request's arrival, to send the whole body. */
  timeoutMs: number;
  /** SVC_MAX_PENDING_BODIES: bodies one client address may be sending at the same time. */
  maxPendingPerClient: number;
  /** The client's address (the trusted one: `req.ip`). */
  clientOf(req: IncomingMessage): string;
}

/**
 * Returns the function the request listener calls first for every request. For a request that announces a
 * body it arms the body's deadline and counts the body against its client until the body has been read
 * (or the request is closed). When the deadline passes, a reader waiting for the body answers 408; a
 * request already answered whose client is still sending has its connection closed (nobody reads on).
 * Every answer to a request whose body was cut short carries `Connection: close`.
 *
 * It decides once the packet that brought the request has been parsed (Node's parser hands over the headers
 * and the body in separate callbacks, so at the check phase of this turn of the event loop): most bodies
 * arrive with their headers, and a body already whole is neither pending nor late, so nothing is attached to
 * its request. Attaching state to every request with a body kept the requests' objects alive into the old
 * generation, a cost every `POST`, `PATCH` and MCP call paid (bench/README.md).
 */
export function createBodyGuard(o: BodyGuardOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const guard: Guard = { o, pending: new Map<string, number>() };
  return (req, res) => {
    if (announcesBody(req)) setImmediate(armIfArriving, guard, req, res);
  };
}

interface Guard {
  o: BodyGuardOptions;
  /** Bodies in flight by client. */
  pending: Map<string, number>;
}

/** Arms the guard for a body still arriving once the request's packet has been parsed (a whole body: nothing). */
function armIfArriving(g: Guard, req: Guarded, res: ServerResponse): void {
  if (req.complete || req.destroyed || req[STATE]) return;
  const state: BodyState = {
    timeoutMs: g.o.timeoutMs,
    limit: g.o.maxPendingPerClient,
    timedOut: false,
    refused: false,
  };
  req[STATE] = state;
  const client = g.o.clientOf(req);
  const count = (g.pending.get(client) ?? 0) + 1;
  if (count > g.o.maxPendingPerClient) {
    state.refused = true;
    res.shouldKeepAlive = false;
    // (a reader already waiting, one that began before this decision, is told; a later one sees `refused`)
    req[READER]?.(new BodyRefusedError(state.limit));
    return;
  }
  g.pending.set(client, count);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    clearTimeout(timer);
    const left = (g.pending.get(client) ?? 1) - 1;
    if (left) g.pending.set(client, left);
    else g.pending.delete(client);
  };
  const timer = setTimeout(() => {
    release();
    if (req.complete) return;
    state.timedOut = true;
    if (!res.headersSent) res.shouldKeepAlive = false;
    const reader = req[READER];
    if (reader) reader(new BodyTimeoutError(state.timeoutMs));
    // answered already, and the client is still sending what nobody will read
    else if (res.writableEnded) req.socket.destroy();
  }, g.o.timeoutMs);
  // (a request closed with its body unread but its connection open stays counted until the deadline)
  req.once('end', release).once('close', () => {
    if (req.complete || req.socket.destroyed) release();
  });
}

/**
 * Reads a request stream to its end, keeping at most `limit` bytes (the rest is read and dropped, so the
 * connection stays usable). `over` tells that the limit was passed. Listeners rather than `for await`: the
 * async iterator costs more than the read itself for the small bodies most requests carry. A stream that
 * fails or closes before its end rejects with `ClientGoneError`; the request's deadline and its client's
 * limit (see `createBodyGuard`) reject with `BodyTimeoutError` and `BodyRefusedError`.
 */
export function readLimited(stream: Readable, limit: number): Promise<{ bytes: Buffer; over: boolean }> {
  const state = (stream as Guarded)[STATE];
  if (state?.refused) return Promise.reject(new BodyRefusedError(state.limit));
  if (state?.timedOut) return Promise.reject(new BodyTimeoutError(state.timeoutMs));
  if (stream.destroyed) return Promise.reject(new ClientGoneError());
  // nothing is hung on a request whose body is whole already (see createBodyGuard)
  const waiting = !(stream as IncomingMessage).complete;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      stream.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      if (waiting) (stream as Guarded)[READER] = undefined;
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve({ bytes: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks), over: size > limit });
    };
    const onError = (err: Error) => {
      cleanup();
      reject(new ClientGoneError(err));
    };
    const onClose = () => {
      cleanup();
      reject(new ClientGoneError());
    };
    const fail = (err: Error) => {
      cleanup();
      stream.pause();
      reject(err);
    };
    // a body still arriving: the guard tells this reader of its deadline, or of a refusal decided after it began
    if (waiting) (stream as Guarded)[READER] = fail;
    stream.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}
