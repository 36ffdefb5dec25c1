import type { TestServer } from '../helpers/harness.js';
import { ENVELOPE_2026 } from './mcpClient.js';

/** One thing read off a `subscriptions/listen` stream: a JSON-RPC message, or an SSE comment (keep-alive). */
export type StreamItem = { message: any } | { comment: string };

export interface ListenStream {
  status: number;
  headers: Headers;
  /** The JSON-RPC error of a refused listen (a JSON answer, no stream). */
  error?: { code: number; message: string; data?: any };
  /** The next message (comments skipped unless `comments`); null once the stream has ended. */
  next(o?: { comments?: boolean }): Promise<StreamItem | null>;
  /** The next JSON-RPC message, or null once the stream has ended. */
  nextMessage(): Promise<any>;
  close(): void;
}

/**
 * Opens a raw `subscriptions/listen` stream over HTTP (fetch, reading the SSE body) with the 2026-07-28 envelope
 * and headers: what a client without the SDK does.
 */
export async function openListen(
  base: string | TestServer,
  notifications: unknown,
  o: { token: string; id?: number | string } = { token: '' },
): Promise<ListenStream> {
  const url = `${typeof base === 'string' ? base : base.baseUrl}/mcp`;
  const aborted = new AbortController();
  const res = await fetch(url, {
    method: 'POST',
    signal: aborted.signal,
    headers: {
      authorization: `Bearer ${o.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'subscriptions/listen',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: o.id ?? 1,
      method: 'subscriptions/listen',
      params: { notifications, _meta: ENVELOPE_2026 },
    }),
  });
  const close = () => aborted.abort();
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) {
    const body = (await res.json()) as { error?: ListenStream['error'] };
    return {
      status: res.status,
      headers: res.headers,
      error: body.error,
      next: async () => null,
      nextMessage: async () => null,
      close,
    };
  }
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const items: StreamItem[] = [];
  let done = false;
  const fill = async () => {
    while (!items.length && !done) {
      const sep = buffer.indexOf('\n\n');
      if (sep >= 0) {
        const frame = buffer.slice(0, sep);
        buffer = buffer.slice(sep + 2);
        if (frame.startsWith(':')) items.push({ comment: frame.slice(1).trim() });
        const data = frame
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trim())
          .join('\n');
        if (data) items.push({ message: JSON.parse(data) });
        continue;
      }
      try {
        const r = await reader.read();
        if (r.done) done = true;
        else buffer += decoder.decode(r.value, { stream: true });
      } catch {
        done = true;
      }
    }
  };
  const next = async (n: { comments?: boolean } = {}): Promise<StreamItem | null> => {
    for (;;) {
      await fill();
      const item = items.shift();
      if (!item) return null;
      if ('comment' in item && !n.comments) continue;
      return item;
    }
  };
  return {
    status: res.status,
    headers: res.headers,
    next,
    nextMessage: async () => {
      const item = await next();
      return item && 'message' in item ? item.message : null;
    },
    close,
  };
}
