import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as headers from '../../src/http/headers.js';
import { SCOPES } from '../../src/domain/scopes.js';

// One place per fact: the API's header names are written in src/http/headers.ts and the scopes in
// src/domain/scopes.ts; every other module imports them, so a renamed header or scope cannot linger anywhere.

const ROOT = path.resolve(import.meta.dirname, '../..');
const FILES = ['src', 'rest', 'mcp', 'db'].flatMap((dir) =>
  fs
    .readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name))),
);

/** Code without its comments (comments and prose may name a header) or module names, lines kept where they were. */
const code = (f: string) =>
  fs
    .readFileSync(path.join(ROOT, f), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ''))
    .replace(/(^|[^:\\])\/\/.*$/gm, '$1')
    .replace(/\bfrom\s+(['"])[^'"]*\1/g, 'from ""');

/**
 * Every header name headers.ts exports: the `*_HEADER` constants, `WWW_AUTHENTICATE`, `RETRY_AFTER` and the lists, so a
 * header added there is looked for everywhere at once.
 */
const HEADER_NAMES = [
  ...new Set(
    Object.entries(headers).flatMap(([name, value]) =>
      Array.isArray(value)
        ? value
        : typeof value === 'string' && (/_HEADER$/.test(name) || name === 'WWW_AUTHENTICATE' || name === 'RETRY_AFTER')
          ? [value]
          : [],
    ),
  ),
];

/**
 * The receiver's side of a webhook signature imports node:crypto only, so a receiver can copy it; the webhook tests
 * verify real deliveries with it, which keeps its spelling of the headers the sender's.
 */
const SELF_CONTAINED = 'src/webhooks/verifyWebhook.ts';

describe('one place per fact', () => {
  it('reads the names it looks for', () => {
    expect(HEADER_NAMES).toContain('X-Request-Id');
    expect(HEADER_NAMES).toEqual(
      expect.arrayContaining(['X-Api-Key', 'Content-Type', 'ETag', 'Svc-Webhook-Signature']),
    );
    expect(HEADER_NAMES.length).toBeGreaterThan(50);
    expect(SCOPES.length).toBeGreaterThan(10);
  });

  it("has the API's header names written only in src/http/headers.ts", () => {
    const escape = (h: string) => h.replace(/[-]/g, '\\-');
    const hyphenated = HEADER_NAMES.filter((h) => h.includes('-'));
    const oneWord = HEADER_NAMES.filter((h) => !h.includes('-'));
    // a hyphenated name is a header in any case
    const hyphenatedName = new RegExp(`(['"\`])(?:${hyphenated.map(escape).join('|')})\\1`, 'i');
    // a one-word name (`Allow`, `Accept`) may be data in lower case: it is a header as written, as an object's key,
    // or in lower case where headers are read
    const words = oneWord.map(escape).join('|');
    const lowerWords = oneWord.map((h) => escape(h.toLowerCase())).join('|');
    const oneWordName = new RegExp(
      `(['"\`])(?:${words})\\1|(?:^|[{,(])\\s*(?:${words})\\s*:(?!:)|` +
        `(?:headers\\??\\.?\\[|header\\(\\w+,\\s*|\\.(?:get|getHeader|setHeader)\\()(['"\`])(?:${lowerWords})\\2`,
    );
    const quoted = { test: (line: string) => hyphenatedName.test(line) || oneWordName.test(line) };
    const stray: string[] = [];
    for (const f of FILES.filter((f) => f !== 'src/http/headers.ts' && f !== SELF_CONTAINED))
      for (const [i, line] of code(f).split('\n').entries())
        if (quoted.test(line)) stray.push(`${f}:${i + 1}: ${line.trim()}`);
    expect(stray).toEqual([]);
  });

  it('has no list of scopes but src/domain/scopes.ts', () => {
    const scope = `['"](?:${SCOPES.join('|')})['"]`;
    const list = new RegExp(`${scope}\\s*,\\s*${scope}`);
    const stray = FILES.filter((f) => f !== 'src/domain/scopes.ts' && list.test(code(f)));
    expect(stray).toEqual([]);
  });
});
