import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { TestServer } from '../helpers/harness.js';

export interface ConnectOptions {
  /** An API key or access token sent as `Authorization: Bearer …`. */
  token?: string;
  headers?: Record<string, string>;
  authProvider?: OAuthClientProvider;
}

/** The SDK's own client over Streamable HTTP, connected (initialized) to the test server's /mcp. */
export async function connectMcp(t: TestServer, o: ConnectOptions = {}): Promise<Client & AsyncDisposable> {
  const headers: Record<string, string> = { ...o.headers };
  if (o.token) headers.Authorization = `Bearer ${o.token}`;
  const transport = new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/mcp`), {
    requestInit: { headers },
    authProvider: o.authProvider,
  });
  const client = new Client({ name: 'svc-test', version: '1.0.0' });
  await client.connect(transport);
  return Object.assign(client, { [Symbol.asyncDispose]: () => client.close() });
}

/** A raw JSON-RPC POST to /mcp, for what the SDK client hides (status codes, headers). */
export async function postMcp(
  t: TestServer,
  body: unknown,
  o: { token?: string; headers?: Record<string, string>; path?: string } = {},
): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
    ...o.headers,
  };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  const res = await t.fetch(o.path ?? '/mcp', {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: any = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* SSE or empty */
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** A tools/call JSON-RPC request. */
export const toolCall = (name: string, args: Record<string, unknown> = {}, id = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

/**
 * What a tool result says: its `structuredContent`, or for an error (`isError`, which carries no
 * structuredContent) the REST error envelope in its text content.
 */
export const bodyOf = (r: Record<string, unknown>): any =>
  r.isError ? JSON.parse((r.content as { type: string; text: string }[])[0].text) : r.structuredContent;

/** The 2026-07-28 `_meta` envelope every request of that revision carries. */
export const ENVELOPE_2026 = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'svc-test', version: '1.0.0' },
};

/**
 * A raw 2026-07-28 request: the envelope in `params._meta` and the standard headers (`MCP-Protocol-Version`,
 * `Mcp-Method`, and `Mcp-Name` for the methods that name something), each overridable to test refusals.
 */
export function post2026(
  t: TestServer,
  method: string,
  params: Record<string, unknown> = {},
  o: { token?: string; headers?: Record<string, string>; id?: number } = {},
): ReturnType<typeof postMcp> {
  const name = (params.name ?? params.uri) as string | undefined;
  const headers: Record<string, string> = {
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
    ...(name !== undefined && { 'mcp-name': name }),
    ...o.headers,
  };
  for (const k of Object.keys(headers)) if (headers[k] === '') delete headers[k];
  const body = {
    jsonrpc: '2.0',
    id: o.id ?? 1,
    method,
    params: { ...params, _meta: { ...ENVELOPE_2026, ...(params._meta as object | undefined) } },
  };
  return postMcp(t, body, { token: o.token, headers });
}
