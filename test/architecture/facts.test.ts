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

/** Code without its comments (comments and prose may name a header). */
const code = (f: string) =>
  fs
    .readFileSync(path.join(ROOT, f), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:\\])\/\/.*$/gm, '$1');

/** Modules still spelling a header of their own: none may join them. */
const NOT_YET = [
  'mcp/authenticateMcp.ts',
  'mcp/checkToolScopes.ts',
  'mcp/createMcpRouter.ts',
  'mcp/readMcpBody.ts',
  'src/auth/idempotency.ts',
  'src/logger.ts',
  'src/oauth/OAuthError.ts',
  'src/oauth/authenticateClient.ts',
  'src/oauth/createOAuthRouter.ts',
  'src/observability/metricsEndpoint.ts',
  'src/web/loginPage.ts',
  'src/web/pageErrorHandler.ts',
];

const HEADER_NAMES = [
  ...headers.EXPOSED_API_HEADERS,
  headers.API_KEY_HEADER,
  headers.IDEMPOTENCY_KEY_HEADER,
  headers.REPLAYED_HEADER,
  headers.WWW_AUTHENTICATE,
];

describe('one place per fact', () => {
  it('reads the names it looks for', () => {
    expect(HEADER_NAMES).toContain('X-Request-Id');
    expect(HEADER_NAMES.length).toBeGreaterThan(12);
    expect(SCOPES.length).toBeGreaterThan(10);
  });

  it("has the API's header names written only in src/http/headers.ts", () => {
    const quoted = new RegExp(`(['"\`])(?:${HEADER_NAMES.map((h) => h.replace(/[-]/g, '\\-')).join('|')})\\1`, 'i');
    const stray: string[] = [];
    for (const f of FILES.filter((f) => f !== 'src/http/headers.ts' && !NOT_YET.includes(f)))
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
