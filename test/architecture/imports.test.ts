import fs from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

// The import graph as docs/architecture.md draws it, read from the source text: type-only imports count too
// (eslint's import-x/no-cycle skips them), and the surface paths are written once, in src/http/surfaces.ts.

const ROOT = path.resolve(import.meta.dirname, '../..');
const DIRS = ['src', 'rest', 'mcp', 'db'];

function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)));
}

const FILES = DIRS.flatMap(filesUnder);
const text = new Map(FILES.map((f) => [f, fs.readFileSync(path.join(ROOT, f), 'utf8')]));

/** The project files a file imports or re-exports from (relative specifiers, `.js` standing for `.ts`). */
function importsOf(file: string): string[] {
  const out: string[] = [];
  for (const m of text.get(file)!.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+'(\.{1,2}\/[^']+)'/gms)) {
    const target = path.relative(ROOT, path.resolve(ROOT, path.dirname(file), m[1].replace(/\.js$/, '.ts')));
    if (text.has(target)) out.push(target);
    else if (text.has(path.join(target.replace(/\.ts$/, ''), 'index.ts')))
      out.push(path.join(target.replace(/\.ts$/, ''), 'index.ts'));
  }
  return out;
}

const GRAPH = new Map(FILES.map((f) => [f, importsOf(f)]));

/** The cycles of the graph, one path per cycle found by a depth-first walk. */
function cycles(): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (f: string) => {
    state.set(f, 'open');
    stack.push(f);
    for (const g of GRAPH.get(f)!) {
      if (state.get(g) === 'open') found.push([...stack.slice(stack.indexOf(g)), g]);
      else if (!state.has(g)) visit(g);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of FILES) if (!state.has(f)) visit(f);
  return found;
}

/** Code without its comments, for the searches below (comments may name the paths). */
const code = (f: string) =>
  text
    .get(f)!
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:\\])\/\/.*$/gm, '$1');

describe('the import graph', () => {
  it('reads the source it checks', () => {
    expect(FILES.length).toBeGreaterThan(100);
    expect(GRAPH.get('src/auth/pipeline.ts')).toContain('src/contract.ts');
  });

  it('has no cycle, type-only imports included', () => {
    expect(cycles().map((c) => c.join(' → '))).toEqual([]);
  });

  it('has the call contract at the bottom: the pipeline imports no procedure and no tRPC, the contract nothing above it', () => {
    for (const f of FILES.filter((f) => f.startsWith('src/auth/'))) {
      expect(
        GRAPH.get(f)!.filter((g) => g.startsWith('src/procedures/')),
        f,
      ).toEqual([]);
      expect(text.get(f), f).not.toMatch(/from '@trpc\//);
    }
    const above = GRAPH.get('src/contract.ts')!.filter(
      (g) => !/^(db\/|src\/domain\/|src\/http\/(surfaces|challenge)\.ts$)/.test(g),
    );
    expect(above).toEqual([]);
  });

  it('has db/ at the bottom: it imports nothing of src/ (what it needs from above is handed in, db/hooks.ts)', () => {
    const fromDb = FILES.filter((f) => f.startsWith('db/')).flatMap((f) =>
      GRAPH.get(f)!
        .filter((g) => !g.startsWith('db/'))
        .map((g) => `${f} → ${g}`),
    );
    expect(fromDb).toEqual([]);
  });
});

/** The rows of the layer table in docs/architecture.md, top to bottom, each with the modules it names. */
function layerTable(): { layer: string; modules: string[] }[] {
  const doc = fs.readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
  const section = doc.slice(doc.indexOf('### Layers'));
  return [...section.matchAll(/^\| ([a-z ]+) \| (`.*`) \|$/gm)].map((m) => ({
    layer: m[1],
    modules: [...m[2].matchAll(/`([^`]+)`/g)].map((x) => x[1]),
  }));
}

describe('the layers of docs/architecture.md', () => {
  const rows = layerTable();
  /** A file's row: the most specific entry naming it (the file itself, else the longest folder holding it). */
  const rowOf = (f: string) => {
    let best = { row: -1, length: -1 };
    rows.forEach((r, i) => {
      for (const m of r.modules)
        if ((m === f || (m.endsWith('/') && f.startsWith(m))) && m.length > best.length)
          best = { row: i, length: m.length };
    });
    return best.row;
  };

  it('with the map of folders, name every folder of src/, rest/, mcp/ and db/', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
    const map = doc.slice(doc.indexOf('## Map of folders'), doc.indexOf('## Imports point one way'));
    const named = new Set(
      [...map.matchAll(/^\| ([^|]+) \|/gm)].flatMap((m) => [...m[1].matchAll(/`([^`]+)`/g)].map((x) => x[1])),
    );
    const folders = [
      ...fs
        .readdirSync(path.join(ROOT, 'src'), { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => `src/${e.name}/`),
      'rest/',
      'mcp/',
      'db/',
    ];
    expect(folders.filter((f) => !named.has(f))).toEqual([]);
  });

  it('name every module of src/, rest/, mcp/ and db/', () => {
    expect(rows.length).toBeGreaterThan(8);
    expect(FILES.filter((f) => rowOf(f) < 0)).toEqual([]);
  });

  it('hold every import: a module imports only from its own row or the rows below', () => {
    const upward: string[] = [];
    for (const f of FILES)
      for (const g of GRAPH.get(f)!)
        if (rowOf(g) < rowOf(f)) upward.push(`${f} (${rows[rowOf(f)].layer}) → ${g} (${rows[rowOf(g)].layer})`);
    expect(upward).toEqual([]);
  });
});

/** Pages not yet reading src/http/surfaces.ts (they tell a token's audience by its path): none may join them. */
const NOT_YET = ['src/web/appsPage.ts', 'src/web/consentView.ts'];

describe('the surface paths', () => {
  it('are written only in src/http/surfaces.ts: no other module spells /v1 or /mcp as a path or a pattern of its own', () => {
    const stray: string[] = [];
    for (const f of FILES.filter((f) => f !== 'src/http/surfaces.ts' && !NOT_YET.includes(f))) {
      for (const [i, line] of code(f).split('\n').entries()) {
        // a regular expression of a surface path (`/^\/v1…/`), or the bare path as a string (`'/mcp'`)
        if (/\\\/(?:v1|mcp)\b/.test(line) || /(['"`])\/(?:v1|mcp)\1/.test(line))
          stray.push(`${f}:${i + 1}: ${line.trim()}`);
      }
    }
    expect(stray).toEqual([]);
  });
});

// The lint rules that keep data access in db/ (eslint.config.js), each shown to fire on a sample and to pass a
// clean one. The samples are linted as if they stood at the path given; the rules that need type information
// (and the cycle rule, which reads the files on disk) are off here, they are not the ones under test.
const RULES = new Set(['no-restricted-syntax', '@typescript-eslint/no-restricted-imports', 'no-restricted-imports']);
const eslint = new ESLint({
  cwd: ROOT,
  overrideConfig: {
    languageOptions: { parserOptions: { projectService: false } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'off',
      '@typescript-eslint/no-misused-promises': 'off',
      'import-x/no-cycle': 'off',
    },
  },
});

/** What the data-access rules report on `source` standing at `file`: one line per message, with its line. */
async function reported(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: path.join(ROOT, file) });
  expect(result.messages.filter((m) => m.fatal)).toEqual([]);
  return result.messages.filter((m) => RULES.has(m.ruleId ?? '')).map((m) => `${m.line}: ${m.message}`);
}
/** Each statement (one or more lines) is reported at least once, on a line of its own. */
const firesOnEach = async (file: string, statements: string[]) => {
  const starts = statements.map((_, i) => 1 + statements.slice(0, i).reduce((n, st) => n + st.split('\n').length, 0));
  const out = await reported(file, statements.join('\n') + '\n');
  const lines = new Set(out.map((m) => Number(m.split(':')[0])));
  expect(starts.filter((line) => !lines.has(line)).map((line) => statements[starts.indexOf(line)])).toEqual([]);
};

describe('the data-access lint rules', () => {
  it('refuse an import of db/ in every adapter, type-only, re-exported and dynamic imports included', async () => {
    for (const file of ['src/web/sample.ts', 'src/web/developer/sample.ts', 'src/cli/commands/sample.ts']) {
      const up = file.split('/').length - 1;
      const db = `${'../'.repeat(up)}db`;
      await firesOnEach(file, [
        `import { ApiKey } from '${db}/entities/index.js';`,
        `import type { User } from '${db}/entities/index.js';`,
        `export type { Room } from '${db}/entities/index.js';`,
        `export const tx = async () => (await import('${db}/transaction.js')).inTransaction;`,
      ]);
    }
    for (const file of ['mcp/sample.ts', 'rest/sample.ts'])
      await firesOnEach(file, [
        "import type { Message } from '../db/entities/index.js';",
        "import { sql } from '../db/sql.js';",
      ]);
  });

  it('refuse SQL outside db/ and src/fastpaths/, in any case, split or interpolated', async () => {
    const statements = [
      'export const a = \'SELECT "id" FROM "users" WHERE "email" = ?\';',
      'export const b = `\n  select * from users`;',
      'export const c = \'INSERT INTO "audit_log" ("id") VALUES (?)\';',
      "export const d = 'delete from web_sessions where id = ?';",
      'export const e = \'UPDATE "api_keys" SET "revokedAt" = ?\';',
      'export const f = (t: string) => `UPDATE "${t}" SET "x" = 1`;',
      'export const g = "WITH recent AS (SELECT 1) SELECT * FROM recent";',
      'export const h = (cols: string) => `SELECT ${cols} FROM "users"`;',
      "export const i = 'SELECT pg_advisory_xact_lock(hashtext(?))';",
      'export const j = \'SELECT k."id", k."userId" \' + \'FROM "api_keys" k\';',
      'export const k = \'SELECT 1 AS "ok"\';',
    ];
    for (const file of ['src/domain/sample.ts', 'src/auth/sample.ts', 'src/web/sample.ts', 'mcp/sample.ts'])
      await firesOnEach(file, statements);
    for (const file of ['db/stores/sample.ts', 'src/fastpaths/sample.ts'])
      expect(await reported(file, statements.join('\n'))).toEqual([]);
  });

  it('refuse TypeORM data calls outside db/ and src/fastpaths/, and its values outside them and the composition', async () => {
    const calls = [
      'export const a = (s: any) => s.ds.getRepository(User).count();',
      "export const b = (m: any) => m.createQueryBuilder().select('x');",
      "export const c = (m: any) => m.query('SELECT 1', []);",
      'export const d = (s: any) => s.ds.manager.findOneBy(User, { id: 1 });',
      'export const e = (m: any) => m.queryRunner!.query(TEXT, [], true);',
      'export const f = (m: any) => m.insert(User, {});',
      'export const g = (ds: any) => ds.manager.delete(User, { id: 1 });',
      "import { In } from 'typeorm';",
    ];
    for (const file of ['src/domain/sample.ts', 'src/oauth/sample.ts', 'src/seed.ts', 'src/web/sample.ts'])
      await firesOnEach(file, calls);
    for (const file of ['db/stores/sample.ts', 'src/fastpaths/sample.ts'])
      expect(await reported(file, calls.join('\n'))).toEqual([]);
    expect(await reported('src/runtime.ts', "import { DataSource } from 'typeorm';\nexport { DataSource };")).toEqual(
      [],
    );
  });

  it('pass a clean adapter: domain imports, type-only TypeORM, sentences that start like SQL, other .query calls', async () => {
    const clean = [
      "import type { EntityManager } from 'typeorm';",
      "import { listApiKeys, type ApiKey } from '../domain/apiKeys.js';",
      "export const labels = ['Update a task', 'Delete webhook?', 'delete old audit log rows', 'Select a room'];",
      "export const more = ['With this key you can read', 'DELETE /v1/rooms/{roomId}', 'insert a line', 'with roomId '];",
      'export const phrase = (n: number) => `Update ${n} tasks, delete ${n} files`;',
      'export const proc = (t: any) => t.input({}).query(() => 1);',
      'export const maps = (cache: Map<string, number>, list: number[]) => [cache.delete("k"), list.find((x) => x)];',
      'export const keys = (m: EntityManager, userId: string): Promise<ApiKey[]> => listApiKeys(m, userId);',
    ];
    for (const file of ['src/web/sample.ts', 'src/cli/commands/sample.ts', 'src/domain/sample.ts', 'rest/sample.ts'])
      expect(await reported(file, clean.join('\n'))).toEqual([]);
  });
});
