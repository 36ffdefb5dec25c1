import { classifyInboundRequest } from '@modelcontextprotocol/server';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { plainToolCallOf, type McpRequestHeaders } from '../../mcp/tools/plainToolCall.js';

const ACCEPT = 'application/json, text/event-stream';
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' },
};

/** Requests near the plain tools/call of both revisions: every part valid, odd or missing. */
const value = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(fc.string(), fc.integer(), { maxKeys: 2 }),
);
/** Mostly `valid`, sometimes anything. */
const mostly = <T>(valid: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: valid, weight: 6 }, { arbitrary: value, weight: 1 });
const envelope = fc.oneof(
  { arbitrary: fc.constant(ENVELOPE), weight: 4 },
  fc.record(
    {
      'io.modelcontextprotocol/protocolVersion': fc.oneof(
        fc.constantFrom('2026-07-28', '2025-11-25', '2099-01-01'),
        value,
      ),
      'io.modelcontextprotocol/clientCapabilities': fc.oneof(fc.constant({}), fc.constant({ sampling: {} }), value),
      'io.modelcontextprotocol/clientInfo': fc.oneof(
        fc.constant({ name: 'c', version: '1' }),
        fc.constant({ name: 'c' }),
        value,
      ),
    },
    { requiredKeys: [] },
  ),
  fc.record({ progressToken: fc.oneof(fc.string(), fc.integer()) }),
  value,
);
/** Mostly null, sometimes `arb`. */
const rarely = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: fc.constant(null), weight: 7 }, { arbitrary: arb, weight: 1 });
/**
 * A request of mostly valid parts; sometimes one more key (`result` beside `method`, `task` in params) or no `_meta`.
 */
const request = fc
  .record({
    jsonrpc: mostly(fc.constant('2.0')),
    id: mostly(fc.oneof(fc.integer(), fc.string(), fc.double())),
    method: mostly(fc.constantFrom('tools/call', 'tools/call', 'tools/list', 'initialize')),
    name: mostly(fc.constantFrom('get_me', 'create_message')),
    args: fc.option(mostly(fc.constantFrom({}, { roomId: 'room_1' })), { freq: 3 }),
    meta: fc.option(envelope, { freq: 2 }),
    extraTop: rarely(fc.constant(true)),
    extraParam: rarely(fc.constant(true)),
    paramsOdd: rarely(value),
  })
  .map((r) => ({
    jsonrpc: r.jsonrpc,
    id: r.id,
    method: r.method,
    params:
      r.paramsOdd !== null
        ? r.paramsOdd
        : {
            name: r.name,
            ...(r.args !== null && { arguments: r.args }),
            ...(r.meta !== null && { _meta: r.meta }),
            ...(r.extraParam && { task: {} }),
          },
    ...(r.extraTop && { result: {} }),
  }));
const body = fc.oneof(
  { arbitrary: request, weight: 8 },
  fc.array(fc.constant({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_me' } }), { maxLength: 2 }),
  value,
);
const headers: fc.Arbitrary<McpRequestHeaders> = fc.oneof(
  fc.constant({ protocolVersionHeader: '2026-07-28', mcpMethodHeader: 'tools/call', mcpNameHeader: 'get_me' }),
  fc.constantFrom(
    {},
    { protocolVersionHeader: '2025-06-18' },
    { protocolVersionHeader: '2025-11-25', mcpMethodHeader: 'tools/list' },
  ),
  fc.record(
    {
      protocolVersionHeader: fc.constantFrom(
        '2026-07-28',
        '2025-11-25',
        '2025-06-18',
        '2025-03-26',
        '2099-01-01',
        ' 2026-07-28',
      ),
      mcpMethodHeader: fc.constantFrom('tools/call', 'tools/list'),
      mcpNameHeader: fc.constantFrom('get_me', 'create_message', '=?base64?Z2V0X21l?='),
    },
    { requiredKeys: [] },
  ),
);

describe('the plain tools/call the router answers itself (mcp/tools/plainToolCall.ts)', () => {
  it('takes only what the SDK classifier routes the same way: 2026-07-28 with a valid envelope, or 2025 without one', () => {
    let taken = 0;
    fc.assert(
      fc.property(headers, body, fc.constantFrom(ACCEPT, ACCEPT, ACCEPT, 'application/json'), (h, b, accept) => {
        const plain = plainToolCallOf(h, accept, b);
        if (!plain) return;
        taken++;
        const route = classifyInboundRequest({ httpMethod: 'POST', ...h, body: b });
        if (plain.revision === 'legacy') expect(route).toMatchObject({ kind: 'legacy', reason: 'no-claim' });
        else {
          expect(route).toMatchObject({
            kind: 'modern',
            messageKind: 'request',
            classification: { revision: '2026-07-28' },
          });
          // the standard headers agree with the body (the SDK's entry checks them after its classifier)
          expect([h.protocolVersionHeader, h.mcpMethodHeader, h.mcpNameHeader]).toEqual([
            '2026-07-28',
            'tools/call',
            (b as { params: { name: string } }).params.name,
          ]);
        }
        expect(b).toMatchObject({ jsonrpc: '2.0', method: 'tools/call', params: { name: plain.name } });
      }),
      { numRuns: 4000 },
    );
    expect(taken).toBeGreaterThan(10);
  });

  it('takes the plain calls of both revisions and leaves the rest', () => {
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_me', arguments: {} } };
    const h26 = { protocolVersionHeader: '2026-07-28', mcpMethodHeader: 'tools/call', mcpNameHeader: 'get_me' };
    expect(plainToolCallOf({ protocolVersionHeader: '2025-06-18' }, ACCEPT, call)).toEqual({
      id: 1,
      name: 'get_me',
      arguments: {},
      revision: 'legacy',
    });
    expect(plainToolCallOf({}, ACCEPT, call)?.revision).toBe('legacy');
    const modern = { ...call, params: { ...call.params, _meta: ENVELOPE } };
    expect(plainToolCallOf(h26, ACCEPT, modern)?.revision).toBe('2026-07-28');
    for (const [h, b] of [
      [{ ...h26, mcpNameHeader: '=?base64?Z2V0X21l?=' }, modern],
      [{ ...h26, mcpNameHeader: 'create_message' }, modern],
      [{ ...h26, mcpMethodHeader: undefined }, modern],
      [h26, call],
      [{ protocolVersionHeader: '2025-11-25' }, modern],
      [{ protocolVersionHeader: '1999-01-01' }, call],
      [{}, [call]],
      [{}, { ...call, params: { ...call.params, _meta: { progressToken: 1 } } }],
      [{}, { ...call, id: 1.5 }],
      [{}, { ...call, extra: 1 }],
    ] as [McpRequestHeaders, unknown][]) {
      expect(plainToolCallOf(h, ACCEPT, b), JSON.stringify([h, b])).toBeNull();
    }
    expect(plainToolCallOf({}, 'application/json', call)).toBeNull();
  });

  it('remembers an envelope by value, as it was: a later change to the request it came in changes no verdict', () => {
    const h26 = { protocolVersionHeader: '2026-07-28', mcpMethodHeader: 'tools/call', mcpNameHeader: 'get_me' };
    const callWith = (meta: unknown) => ({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'get_me', arguments: {}, _meta: meta },
    });
    const meta = { ...ENVELOPE, 'io.modelcontextprotocol/clientInfo': { name: 'copy-test', version: '2' } };
    expect(plainToolCallOf(h26, ACCEPT, callWith(meta))?.revision).toBe('2026-07-28');
    // the same envelope again (equal, not the same object, keys in another order): the same verdict
    const reordered = Object.fromEntries(Object.entries(structuredClone(meta)).reverse());
    expect(plainToolCallOf(h26, ACCEPT, callWith(reordered))?.revision).toBe('2026-07-28');
    // the first request's envelope changed afterwards into one the classifier refuses: still refused when sent
    meta['io.modelcontextprotocol/clientInfo'] = { name: 'copy-test' } as never;
    expect(plainToolCallOf(h26, ACCEPT, callWith(structuredClone(meta)))).toBeNull();
    expect(classifyInboundRequest({ httpMethod: 'POST', ...h26, body: callWith(meta) }).kind).not.toBe('modern');
    // more envelopes than are kept, of one client and in all: each still gets the classifier's verdict
    for (let i = 0; i < 20; i++) {
      const caps = { experimental: { [`x${i}`]: {} } };
      const one = { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': caps };
      expect(plainToolCallOf(h26, ACCEPT, callWith(one))?.revision).toBe('2026-07-28');
      const bad = { ...one, 'io.modelcontextprotocol/clientCapabilities': 'none' };
      expect(plainToolCallOf(h26, ACCEPT, callWith(bad))).toBeNull();
    }
    for (let i = 0; i < 300; i++) {
      const other = { ...ENVELOPE, 'io.modelcontextprotocol/clientInfo': { name: `c${i}`, version: String(i) } };
      expect(plainToolCallOf(h26, ACCEPT, callWith(other))?.revision).toBe('2026-07-28');
      const bad = { ...other, 'io.modelcontextprotocol/protocolVersion': 'x' };
      expect(plainToolCallOf(h26, ACCEPT, callWith(bad))).toBeNull();
    }
  });
});
