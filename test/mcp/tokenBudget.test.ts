import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { listLimit, measureTokens, TOKEN_LIMITS } from '../../bench/tokens.js';

// The figures bench/tokens.ts prints (`npm run bench`), held to the limits an agent's context can afford.
describe('MCP token budget (o200k_base)', () => {
  it('keeps the tool list, a toolset, read-only mode and an agent session within their limits', async () => {
    const f = await measureTokens();
    const list = Object.fromEntries(f.toolList.map((r) => [r.label, r]));
    expect(list['every scope'].tools).toBeGreaterThanOrEqual(40);
    expect(list['every scope'].tokens).toBeLessThanOrEqual(TOKEN_LIMITS.toolList);
    expect(list['toolset messages'].tokens).toBeLessThan(list['every scope'].tokens / 10);
    expect(list['read-only'].tokens).toBeLessThan(list['every scope'].tokens / 2 + 200);

    const page = f.session.find((s) => s.tool === 'list_messages')!;
    expect(page.rows).toBe(20);
    expect(page.text).toBeLessThanOrEqual(TOKEN_LIMITS.messagePage);
    // the page's text within twice its user content and 20 a row; every step's text no larger than its
    // structuredContent
    expect(page.text).toBeLessThanOrEqual(listLimit(page, false));
    // every list tool within twice its content (what people wrote and the ids the agent acts on) and 20 a row
    for (const s of f.lists) expect(s.text, s.step).toBeLessThanOrEqual(listLimit(s, true));
    for (const s of [...f.session, ...f.lists]) expect(s.text, s.step).toBeLessThanOrEqual(s.structured);

    // the guide's figures are these, so they cannot drift: the tool count exactly, the tokens to the nearest hundred
    // (ids and times move them by a few between runs)
    const guide = fs.readFileSync(new URL('../../docs/mcp.md', import.meta.url), 'utf8');
    const stated = /sees all of them \((\d+), about ([\d,]+) tokens of\s+`tools\/list` in o200k/.exec(guide);
    expect(stated, 'docs/mcp.md states the tool count and tokens of a key with every scope').not.toBeNull();
    expect(Number(stated![1])).toBe(list['every scope'].tools);
    expect(Math.abs(Number(stated![2].replace(/,/g, '')) - list['every scope'].tokens)).toBeLessThanOrEqual(100);
  });
});
