import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { RateLimiterSQLite } from 'rate-limiter-flexible';
import { describe, expect, it } from 'vitest';

// Every file of src/fastpaths/ copies what a library does inside (a loop, a set of checks, a statement) to do it
// for less. Each is pinned here to the exact version it mirrors and to a fingerprint of the library code it
// copies: when an upgrade changes either, this fails and says what to re-read before updating the numbers. The MCP
// fast path (plainToolCall.ts) copies nothing of the SDK: it uses its public API, and test/mcp/fastToolCall.test.ts
// holds its answers to the SDK's own.

const ROOT = path.resolve(import.meta.dirname, '../..');
const require = createRequire(import.meta.url);
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};
const installed = (name: string) =>
  (JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string })
    .version;
const fingerprint = (...code: string[]) => createHash('sha256').update(code.join('\n')).digest('hex').slice(0, 16);

/** The text of a library file from `from` up to and including `to` (what a fast path copies). */
function slice(file: string, from: string, to: string): string {
  const text = fs.readFileSync(file, 'utf8');
  const start = text.indexOf(from);
  const end = text.indexOf(to, start);
  if (start < 0 || end < 0)
    throw new Error(`${path.relative(ROOT, file)} no longer holds ${JSON.stringify(from)} … ${JSON.stringify(to)}`);
  return text.slice(start, end + to.length);
}

/** tRPC's middleware loop, in the built chunk that holds it (its name carries a content hash). */
function trpcLoop(): string {
  const dist = path.join(ROOT, 'node_modules/@trpc/server/dist');
  const chunk = fs.readdirSync(dist).find((f) => /^initTRPC-.*\.mjs$/.test(f));
  if (!chunk) throw new Error('@trpc/server no longer ships dist/initTRPC-*.mjs');
  return slice(path.join(dist, chunk), 'async function callRecursive(', 'procedure.meta = _def.meta;');
}

/** tRPC's input and output middlewares, which invokeProcedure runs inline, and how the builder keeps their parsers. */
function trpcParserMiddlewares(): string[] {
  const dist = path.join(ROOT, 'node_modules/@trpc/server/dist');
  const file = path.join(
    dist,
    fs.readdirSync(dist).find((f) => /^initTRPC-.*\.mjs$/.test(f))!,
  );
  return [
    slice(file, 'function createInputMiddleware(', 'inputMiddleware._type = "input";'),
    slice(file, 'function createOutputMiddleware(', 'outputMiddleware._type = "output";'),
    slice(file, 'function createNewBuilder(', 'function createBuilder('),
    slice(file, '\t\tinput(input) {', '\t\tmeta(meta) {'),
  ];
}

interface Mirror {
  file: string;
  pkg: string;
  version: string;
  /** The library code the fast path copies, as text. */
  code: () => string[];
  sha: string;
  recheck: string;
}

const MIRRORS: Mirror[] = [
  {
    file: 'src/fastpaths/invokeProcedure.ts',
    pkg: '@trpc/server',
    version: '11.25.2',
    code: () => [trpcLoop(), ...trpcParserMiddlewares()],
    sha: 'f232882e7c832906',
    recheck:
      'callRecursive/createProcedureCaller: the options each middleware is given, how `next` merges ctx/input/getRawInput, how a thrown error and a missing result become TRPCErrors; createInputMiddleware/createOutputMiddleware (run inline: their parse, merge and errors) and how the builder keeps their parsers (`inputs`, `output`)',
  },
  {
    file: 'src/fastpaths/sqliteRateLimiter.ts',
    pkg: 'rate-limiter-flexible',
    version: '11.4.0',
    code: () => {
      const proto = RateLimiterSQLite.prototype as unknown as Record<string, () => void>;
      return ['_upsertTransaction', '_getRateLimiterRes', '_getCreateTableSQL'].map((m) => proto[m].toString());
    },
    sha: '4f9d2238a25fdd32',
    recheck:
      "RateLimiterSQLite's upsert statement, its key (keyPrefix:key), table columns and how it turns a row into remaining points and msBeforeNext",
  },
  {
    file: 'src/fastpaths/sqliteTransaction.ts',
    pkg: 'typeorm',
    version: '1.1.1',
    code: () => {
      const runner = path.join(ROOT, 'node_modules/typeorm/driver/sqlite-abstract/AbstractSqliteQueryRunner.js');
      return [
        slice(runner, 'async startTransaction(', 'async rollbackTransaction('),
        slice(
          path.join(ROOT, 'node_modules/typeorm/driver/better-sqlite3/BetterSqlite3Driver.js'),
          'async createDatabaseConnection(',
          'return databaseConnection;',
        ),
      ];
    },
    sha: 'be82cf9e7e7d8524',
    recheck:
      "AbstractSqliteQueryRunner's start/commit/rollbackTransaction (isTransactionActive, transactionDepth, the statements it sends) and BetterSqlite3Driver's databaseConnection",
  },
  {
    file: 'src/fastpaths/typeormDriver.ts',
    pkg: 'typeorm',
    version: '1.1.1',
    code: () => {
      const driver = (d: string) => path.join(ROOT, 'node_modules/typeorm/driver', d);
      return [
        slice(
          driver('sqlite-abstract/AbstractSqliteDriver.js'),
          'async connect() {',
          'this.databaseConnection = await this.createDatabaseConnection();',
        ),
        slice(
          driver('postgres/PostgresDriver.js'),
          'async connect() {',
          'this.master = await this.createPool(this.options, this.options);',
        ),
      ];
    },
    sha: '457efa301301f21c',
    recheck:
      "AbstractSqliteDriver.connect (the field that keeps better-sqlite3's connection) and PostgresDriver.connect (the field that keeps the node-postgres pool)",
  },
];

describe('the fast paths of src/fastpaths/ are pinned to the library code they mirror', () => {
  it.each(MIRRORS)('$file mirrors $pkg@$version', (m) => {
    const header = fs.readFileSync(path.join(ROOT, m.file), 'utf8').split('\n')[0];
    expect(header, `${m.file} must begin with "// Mirrors ${m.pkg}@${m.version}"`).toMatch(
      new RegExp(`^// Mirrors ${m.pkg.replace(/[/.]/g, '\\$&')}@${m.version.replaceAll('.', '\\.')}:`),
    );
    expect(pkg.dependencies[m.pkg], `package.json pins ${m.pkg} to exactly ${m.version}`).toBe(m.version);
    expect(installed(m.pkg), `installed ${m.pkg}`).toBe(m.version);
    expect(require.resolve(m.pkg === 'typeorm' ? m.pkg : `${m.pkg}/package.json`)).toContain(
      path.join(ROOT, 'node_modules'),
    );
    expect(
      fingerprint(...m.code()),
      `${m.pkg} changed the code ${m.file} copies: re-read ${m.recheck}; bring ${m.file} in line, then update its header, this version and this fingerprint`,
    ).toBe(m.sha);
  });
});

describe("no module outside src/fastpaths/ reads a library's internals", () => {
  // zod's `_zod` internals, Express's router stack and TypeORM's undeclared driver fields; tRPC's `_def` is declared
  // in its typings (its own helpers take a `Pick<Router, '_def'>`), and what it keeps there undeclared is read in
  // src/fastpaths/invokeProcedure.ts
  const INTERNALS = /\._zod\b|\._router\b|\.router\.stack\b|\.driver\.(?:master|databaseConnection)\b/;
  it('finds none in src/, rest/, mcp/ or db/', () => {
    const stray = ['src', 'rest', 'mcp', 'db']
      .flatMap((dir) =>
        fs
          .readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
          .filter((e) => e.isFile() && e.name.endsWith('.ts'))
          .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name))),
      )
      .filter((f) => !f.startsWith('src/fastpaths/'))
      .flatMap((f) =>
        fs
          .readFileSync(path.join(ROOT, f), 'utf8')
          .split('\n')
          .flatMap((line, i) => (INTERNALS.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(stray).toEqual([]);
  });
});
