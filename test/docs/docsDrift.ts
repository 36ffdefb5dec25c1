import path from 'node:path';

// The checks of docsDrift.test.ts, as pure functions of the documents' texts, so the test can also show each one
// failing on a broken document. Each returns one readable line per problem (empty: nothing drifted).

export interface Doc {
  /** Relative to the repository root, with `/`. */
  file: string;
  text: string;
}

/** The markdown files of a recursive listing of docs/, as repository paths. */
export const docsIn = (entries: string[]): string[] =>
  entries
    .filter((e) => e.endsWith('.md'))
    .map((e) => `docs/${e.split(path.sep).join('/')}`)
    .sort();

const FENCE = /^\s*(```|~~~)/;

/** A document cut into prose (code blocks and code spans removed), its code blocks' lines and its code spans. */
function parts(text: string): { prose: string; codeLines: string[]; spans: string[] } {
  const prose: string[] = [];
  const codeLines: string[] = [];
  let fence: string | null = null;
  for (const line of text.split('\n')) {
    const m = FENCE.exec(line);
    if (m && (fence === null || m[1] === fence)) {
      fence = fence === null ? m[1] : null;
      prose.push('');
    } else if (fence !== null) {
      codeLines.push(line);
      prose.push('');
    } else prose.push(line);
  }
  const spans: string[] = [];
  const withoutSpans = prose.join('\n').replace(/`([^`]+)`/g, (_, code: string) => {
    spans.push(code);
    return ' ';
  });
  // a command continued with a trailing backslash is one line
  return {
    prose: withoutSpans,
    codeLines: codeLines
      .join('\n')
      .replace(/\\\n\s*/g, ' ')
      .split('\n'),
    spans,
  };
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string) =>
  heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

/** The anchors of a document's headings (outside code; a code span's words stay in its heading's anchor). */
function headingAnchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fence: string | null = null;
  for (const line of text.split('\n')) {
    const f = FENCE.exec(line);
    if (f && (fence === null || f[1] === fence)) fence = fence === null ? f[1] : null;
    const m = fence === null && !f ? /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line) : null;
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

/** Every relative link (outside code) names a file that exists, and every `#anchor` a heading of its file. */
export function checkLinks(docs: Doc[], exists: (rel: string) => boolean, read: (rel: string) => Doc): string[] {
  const problems: string[] = [];
  for (const doc of docs) {
    for (const m of parts(doc.text).prose.matchAll(/\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue;
      const [file, fragment] = target.split('#', 2) as [string, string | undefined];
      const rel = file ? path.posix.normalize(path.posix.join(path.posix.dirname(doc.file), file)) : doc.file;
      if (file && !exists(rel)) {
        problems.push(`${doc.file}: link to ${target}: no such file`);
        continue;
      }
      if (fragment === undefined || !rel.endsWith('.md')) continue;
      const text = docs.find((d) => d.file === rel)?.text ?? read(rel).text;
      if (!headingAnchors(text).has(decodeURIComponent(fragment)))
        problems.push(`${doc.file}: link to ${target}: no heading "${fragment}" in ${rel}`);
    }
  }
  return problems;
}

/** Names that look like environment variables: the server's prefixes anywhere, and `NAME=` assignments. */
function variablesNamed(text: string): string[] {
  const names = [
    ...[...text.matchAll(/\b(?:SVC|OTEL)_[A-Z0-9_]*[A-Z0-9]\b/g)].map((m) => m[0]),
    ...[...text.matchAll(/(?:^|[\s`'"(])([A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9])=/gm)].map((m) => m[1]),
  ];
  return [...new Set(names)];
}

/** The names in the first cell of each row of a table (`| \`PORT\`, \`HOST\` | … |`). */
const tableNames = (text: string) =>
  text.split('\n').flatMap((line) => {
    const cell = /^\|([^|]*)\|/.exec(line)?.[1] ?? '';
    return [...cell.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]);
  });

/**
 * Every variable the documents name is one the configuration reads (or one of `others`, read elsewhere), and every
 * configuration variable has a row in docs/configuration.md's tables.
 */
export function checkEnvVariables(
  docs: Doc[],
  configVariables: readonly string[],
  others: readonly string[],
): string[] {
  const known = new Set([...configVariables, ...others]);
  const problems: string[] = [];
  for (const doc of docs) {
    const names = [...variablesNamed(doc.text), ...(doc.file === 'docs/configuration.md' ? tableNames(doc.text) : [])];
    for (const name of new Set(names))
      if (!known.has(name)) problems.push(`${doc.file} names ${name}, which no configuration reads`);
  }
  const documented = new Set(tableNames(docs.find((d) => d.file === 'docs/configuration.md')?.text ?? ''));
  for (const name of configVariables)
    if (!documented.has(name)) problems.push(`${name} (src/config.ts) is not in docs/configuration.md`);
  return problems;
}

export interface CommandSpec {
  name: string;
  options: string[];
}

/**
 * The `svc …` invocations of a document: in code blocks `npx svc` anywhere or `svc` opening a line; code spans that
 * open with one.
 */
function invocations(text: string): string[] {
  const { codeLines, spans } = parts(text);
  const found: string[] = [];
  for (const line of codeLines) {
    for (const m of line.matchAll(/(?:^\s*(?:\$\s+)?|\bnpx\s+)svc\s+(.*)$/g)) found.push(m[1]);
  }
  for (const span of spans) {
    const m = /^(?:npx\s+)?svc\s+(.*)$/s.exec(span.trim());
    if (m) found.push(m[1].replace(/\s+/g, ' '));
  }
  return found;
}

/** Every `svc` command the documents show is in the registry (or a built-in), and takes every option shown with it. */
export function checkCommands(docs: Doc[], registry: CommandSpec[], builtins: readonly string[]): string[] {
  const problems = new Set<string>();
  for (const doc of docs) {
    for (const raw of invocations(doc.text)) {
      // the command ends at a shell comment, a pipe or the next command
      const rest = raw.split(/\s#|\s\|\s|&&|;/)[0];
      const [w1, w2] = rest.trim().split(/\s+/);
      if (!w1 || !/^[a-z][a-z-]*$/.test(w1)) continue;
      if (builtins.includes(w1)) continue;
      const cmd = registry.find((c) => c.name === `${w1} ${w2}`) ?? registry.find((c) => c.name === w1);
      if (!cmd) {
        problems.add(`${doc.file}: svc ${w2 && /^[a-z][a-z-]*$/.test(w2) ? `${w1} ${w2}` : w1}: no such command`);
        continue;
      }
      for (const m of rest.matchAll(/(?:^|[\s[])--([a-z][a-z-]*)/g)) {
        if (!cmd.options.includes(m[1]) && m[1] !== 'json' && m[1] !== 'help')
          problems.add(`${doc.file}: svc ${cmd.name}: no option --${m[1]}`);
      }
    }
  }
  return [...problems];
}

export interface Operation {
  method: string;
  path: string;
  operationId: string;
  scopes: string[];
}

/** The REST guide's table has one row per operation of the document, naming its tool and scopes, and no other. */
export function checkOperations(guide: Doc, operations: Operation[]): string[] {
  const rows = guide.text.split('\n').filter((l) => l.trimStart().startsWith('|'));
  const problems: string[] = [];
  for (const op of operations) {
    const key = `${op.method} ${op.path}`;
    const row = rows.find((r) => r.includes(`\`${key}\``));
    if (!row) {
      problems.push(`${guide.file}: ${key} (${op.operationId}) has no row in the table`);
      continue;
    }
    if (!row.includes(`\`${op.operationId}\``))
      problems.push(`${guide.file}: the row of ${key} does not name its tool ${op.operationId}`);
    for (const scope of op.scopes)
      if (!row.includes(`\`${scope}\``))
        problems.push(`${guide.file}: the row of ${key} does not name its scope ${scope}`);
  }
  const known = new Set(operations.map((o) => `${o.method} ${o.path}`));
  for (const row of rows) {
    for (const m of row.matchAll(/`((?:GET|POST|PUT|PATCH|DELETE) \/v1[^`\s]*)`/g)) {
      if (!known.has(m[1]))
        problems.push(`${guide.file}: a row names ${m[1]}, which the OpenAPI document does not have`);
    }
  }
  return problems;
}
