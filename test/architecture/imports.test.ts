import fs from 'node:fs';
import path from 'node:path';
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
