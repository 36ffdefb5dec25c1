import { encodeCursor } from '../src/domain/paging.js';
import type { LoadTarget } from './runLoad.js';
import type { BenchWorld } from './seedBench.js';

/** A load scenario: measured once per round against one of the two servers. */
export interface HttpScenario {
  name: string;
  label: string;
  server: 'bare' | 'product' | 'product-pg';
  target: LoadTarget;
}

/** The MCP `tools/call` of `get_me` over Streamable HTTP (stateless: every POST stands alone). */
export const MCP_GET_ME_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'get_me', arguments: {} },
});

/** The MCP `tools/call` of `list_messages`: the first page (50) of the 1,000-message room. */
export const mcpListMessagesBody = (roomId: string) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'list_messages', arguments: { roomId, limit: 50 } },
  });

export const mcpHeaders = (apiKey: string) => ({
  authorization: `Bearer ${apiKey}`,
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
});

/** The same `tools/call` of `get_me` on MCP 2026-07-28: no initialize, the `_meta` envelope, the standard headers. */
export const MCP_2026_GET_ME_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    name: 'get_me',
    arguments: {},
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
    },
  },
});
export const mcp2026Headers = (apiKey?: string) => ({
  ...(apiKey && { authorization: `Bearer ${apiKey}` }),
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'get_me',
});

/** Every scenario of the load rounds, in the order a round runs them (the bare server first). */
export function httpScenarios(w: BenchWorld, secret: string): HttpScenario[] {
  const auth = { authorization: `Bearer ${w.apiKey}` };
  const list = (roomId: string, key?: string) =>
    `/v1/rooms/${roomId}/messages?limit=50${key ? `&cursor=${encodeURIComponent(encodeCursor(secret, key))}` : ''}`;
  const get = (path: string): LoadTarget => ({ method: 'GET', path, headers: auth });
  return [
    { name: 'bare', label: 'bare Express GET /v1/me', server: 'bare', target: { method: 'GET', path: '/v1/me' } },
    // the v2 MCP SDK's own stateless server (createMcpHandler) on the bare server: one tool, no credential, no database
    {
      name: 'sdk-mcp-get-me',
      label: 'bare v2 SDK MCP get_me (2025)',
      server: 'bare',
      target: {
        method: 'POST',
        path: '/mcp',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
        },
        body: MCP_GET_ME_BODY,
      },
    },
    {
      name: 'sdk-mcp-get-me-2026',
      label: 'bare v2 SDK MCP get_me (2026)',
      server: 'bare',
      target: { method: 'POST', path: '/mcp', headers: mcp2026Headers(), body: MCP_2026_GET_ME_BODY },
    },
    { name: 'me', label: 'GET /v1/me', server: 'product', target: get('/v1/me') },
    { name: 'rooms', label: 'GET /v1/rooms?limit=50', server: 'product', target: get('/v1/rooms?limit=50') },
    {
      name: 'post-message',
      label: 'POST /v1/rooms/{id}/messages',
      server: 'product',
      target: {
        method: 'POST',
        path: `/v1/rooms/${w.roomId}/messages`,
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ body: 'Benchmark message' }),
      },
    },
    {
      name: 'mcp-get-me',
      label: 'MCP tools/call get_me',
      server: 'product',
      target: { method: 'POST', path: '/mcp', headers: mcpHeaders(w.apiKey), body: MCP_GET_ME_BODY },
    },
    {
      name: 'mcp-get-me-2026',
      label: 'MCP 2026 tools/call get_me',
      server: 'product',
      target: { method: 'POST', path: '/mcp', headers: mcp2026Headers(w.apiKey), body: MCP_2026_GET_ME_BODY },
    },
    {
      name: 'patch-task',
      label: 'PATCH /v1/rooms/{id}/tasks/{id}',
      server: 'product',
      target: {
        method: 'PATCH',
        path: `/v1/rooms/${w.roomId}/tasks/${w.taskId}`,
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ status: 'in_progress', description: 'Benchmark update' }),
      },
    },
    {
      name: 'mcp-list-messages',
      label: 'MCP tools/call list_messages',
      server: 'product',
      target: { method: 'POST', path: '/mcp', headers: mcpHeaders(w.apiKey), body: mcpListMessagesBody(w.smallRoomId) },
    },
    { name: 'list-1k', label: 'messages page 1 @ 1k', server: 'product', target: get(list(w.smallRoomId)) },
    {
      name: 'list-1k-deep',
      label: 'messages deep page @ 1k',
      server: 'product',
      target: get(list(w.smallRoomId, w.smallDeepKey)),
    },
    { name: 'list-large', label: 'messages page 1 @ large', server: 'product', target: get(list(w.largeRoomId)) },
    {
      name: 'list-large-deep',
      label: 'messages deep page @ large',
      server: 'product',
      target: get(list(w.largeRoomId, w.largeDeepKey)),
    },
  ];
}

/**
 * Whether /mcp answers a stateless `tools/call` of `get_me` with the caller's profile. Returns null when
 * it does, else the reason to report the scenario as skipped.
 */
export async function probeMcp(baseUrl: string, apiKey: string): Promise<string | null> {
  try {
    const r = await fetch(`${baseUrl}/mcp`, { method: 'POST', headers: mcpHeaders(apiKey), body: MCP_GET_ME_BODY });
    const text = await r.text();
    if (r.status !== 200) return `/mcp not available (HTTP ${r.status})`;
    const body = JSON.parse(text.startsWith('event:') || text.startsWith('data:') ? sseData(text) : text) as {
      result?: { isError?: boolean; structuredContent?: { id?: string } };
    };
    if (!body.result || body.result.isError || !body.result.structuredContent?.id)
      return '/mcp not available (get_me gave no profile)';
    return null;
  } catch (e) {
    return `/mcp not available (${(e as Error).message})`;
  }
}

const sseData = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).trim())
    .join('');

/** The product's scenarios of these names, in the order given; an unknown name is an error naming the known ones. */
export function productScenarios(w: BenchWorld, secret: string, names: string[]): HttpScenario[] {
  const all = httpScenarios(w, secret).filter((s) => s.server === 'product');
  const base = (n: string) => n.split('@')[0];
  const unknown = names.filter((n) => !all.some((s) => s.name === base(n)));
  if (unknown.length)
    throw new Error(`unknown scenario(s) ${unknown.join(', ')}; known: ${all.map((s) => s.name).join(', ')}`);
  return names.map((n) => {
    const s = all.find((x) => x.name === base(n))!;
    const variant = n.split('@')[1];
    if (variant === undefined) return s;
    // `name@v`: the same requests with `X-Bench-Variant: v`, for a scratch change that reads it (an A/B in one process)
    const target = { ...s.target, headers: { ...s.target.headers, [BENCH_VARIANT_HEADER]: variant } };
    return { ...s, name: n, label: `${s.label} @${variant}`, target };
  });
}

/** The header `name@v` scenarios send (productScenarios). */
export const BENCH_VARIANT_HEADER = 'x-bench-variant';
