import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ALL_SCOPES, createWorld, issueKey, startTestServer } from '../helpers/harness.js';
import { connectMcp } from './mcpClient.js';

const guide = fs.readFileSync(new URL('../../docs/mcp.md', import.meta.url), 'utf8');

/** The backticked tool names of a passage of the guide. */
const toolNames = (passage: string) => [...passage.matchAll(/`([a-z]+(?:_[a-z]+)+)`/g)].map((m) => m[1]).sort();

/** The guide's text from `start` to the first `end` after it. */
function passage(start: string, end: string): string {
  const from = guide.indexOf(start);
  expect(from, start).toBeGreaterThanOrEqual(0);
  return guide.slice(from, guide.indexOf(end, from));
}

describe("docs/mcp.md's claims about the tools' annotations hold for tools/list", () => {
  it('every hint stated; the destructive and the idempotent writes are the ones the guide names', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const all = (
      await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: [...ALL_SCOPES, 'agent:invoke'] })
    ).token;
    await using c = await connectMcp(t, { token: all });
    const { tools } = await c.listTools();
    const named = (hint: 'destructiveHint' | 'idempotentHint', writesOnly: boolean) =>
      tools
        .filter((x) => x.annotations?.[hint] === true && !(writesOnly && x.annotations.readOnlyHint))
        .map((x) => x.name)
        .sort();

    // "Every tool states all four hints, none left to a default", "`openWorldHint: false` everywhere"
    for (const tool of tools) {
      const a = tool.annotations ?? {};
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const)
        expect(typeof a[hint], `${tool.name} ${hint}`).toBe('boolean');
      expect(a.openWorldHint, tool.name).toBe(false);
      // reads: read-only, not destructive, idempotent
      if (a.readOnlyHint) expect([a.destructiveHint, a.idempotentHint], tool.name).toEqual([false, true]);
    }
    // "The tools marked destructive (`destructiveHint` true in `tools/list`): …"
    const destructive = toolNames(passage('The tools marked destructive', 'When a'));
    expect(destructive.length).toBeGreaterThan(0);
    expect(named('destructiveHint', false)).toEqual(destructive);
    // "`idempotentHint` true for the reads and the idempotent writes …"
    const idempotentWrites = toolNames(passage('the idempotent writes', 'false for the other writes'));
    expect(idempotentWrites.length).toBeGreaterThan(0);
    expect(named('idempotentHint', true)).toEqual(idempotentWrites);
    // "`readOnlyHint` true for the reads (the tools of read-only mode)"
    await using ro = await connectMcp(t, { token: all, headers: { 'x-mcp-readonly': 'true' } });
    expect((await ro.listTools()).tools.map((x) => x.name).sort()).toEqual(
      tools
        .filter((x) => x.annotations?.readOnlyHint)
        .map((x) => x.name)
        .sort(),
    );
  });
});
