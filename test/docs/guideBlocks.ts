import type { Doc } from './docsDrift.js';

// The ```sh blocks of the guides, as a reader pastes them. Each is runnable against a live server with the guide's
// variables (guides.slow.test.ts runs it), or is preceded by a line `<!-- not-runnable: <reason> -->` (another
// machine, another client, a production deploy). A runnable block that starts something which keeps running is
// preceded by `<!-- background: "<text>" -->`: the test starts it, waits until it prints the text, and stops it at
// the end of the guide; `<!-- background: "<text>", later "<more>" -->` also waits, after the guide's last block,
// until it prints the second text (what the blocks in between made it do).

/** The variables a reader sets from what `npm start` printed; the test sets them from the live server's demo data. */
export const GUIDE_VARIABLES = ['SVC_URL', 'SVC_API_KEY', 'ROOM', 'ORG', 'USER_ID'] as const;
export type GuideValues = Record<(typeof GUIDE_VARIABLES)[number], string>;

export interface ShBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
  notRunnable: string | null;
  /** For a block left running: the text it prints once ready. */
  background: string | null;
  /** What it prints by the end of the guide. */
  later: string | null;
  /** The marker line above the block that the test does not understand, if any. */
  badMarker: string | null;
}

export function shBlocks(doc: Doc): ShBlock[] {
  const lines = doc.text.split('\n');
  const out: ShBlock[] = [];
  let fence: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const m = /^(\s*)(```|~~~)(\S*)/.exec(lines[i]);
    if (!m) continue;
    if (fence !== null) {
      if (m[2] === fence) fence = null;
      continue;
    }
    fence = m[2];
    if (m[3] !== 'sh') continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !lines[i].trimStart().startsWith(fence); i++) body.push(lines[i]);
    fence = null;
    let p = start - 1;
    while (p >= 0 && lines[p].trim() === '') p--;
    const above = p >= 0 ? lines[p].trim() : '';
    const notRunnable = /^<!--\s*not-runnable:\s*(\S.*?)\s*-->$/.exec(above)?.[1] ?? null;
    const bg = /^<!--\s*background:\s*"([^"]+)"(?:,\s*later\s*"([^"]+)")?\s*-->$/.exec(above);
    const background = bg?.[1] ?? null;
    const badMarker = above.startsWith('<!--') && notRunnable === null && background === null ? above : null;
    out.push({
      file: doc.file,
      line: start + 1,
      code: body.join('\n'),
      notRunnable,
      background,
      later: bg?.[2] ?? null,
      badMarker,
    });
  }
  return out;
}

/** A block's code without its comments (a `#` opening a word, outside quotes, closely enough for the guides). */
function withoutComments(code: string): string {
  return code
    .split('\n')
    .map((l) => l.replace(/(^|\s)#(?![!{]).*$/, '$1'))
    .join('\n');
}

/** The lines `export NAME=value …`, with the guide variables' values removed (a reader pastes their own). */
const withoutGuideValues = (code: string) =>
  code.replace(
    new RegExp(`(^|\\s)(${GUIDE_VARIABLES.join('|')})=\\S+`, 'gm'),
    (_, pre: string, name: string) => `${pre}${name}=`,
  );

/**
 * Each sh block is runnable or says why not, and a runnable block can be pasted as it is: no `…` left to fill in
 * (except the guide variables' values, which the reader sets once), no fixed server address (`$SVC_URL`).
 */
export function checkBlockMarkers(docs: Doc[]): string[] {
  const problems: string[] = [];
  for (const doc of docs) {
    for (const b of shBlocks(doc)) {
      const at = `${b.file}:${b.line}`;
      if (b.badMarker) problems.push(`${at}: unknown marker ${b.badMarker}`);
      if (b.notRunnable !== null) continue;
      const code = withoutGuideValues(withoutComments(b.code));
      if (code.includes('…')) problems.push(`${at}: a placeholder (…) in a runnable block`);
      if (/localhost:3000|127\.0\.0\.1:3000/.test(code))
        problems.push(`${at}: the server's address instead of $SVC_URL`);
    }
  }
  return problems;
}

/** Variables every shell has. */
const SHELL_VARIABLES = new Set(['HOME', 'PATH', 'PWD', 'USER', 'RANDOM', 'SECONDS', 'BASHPID']);

/** `NAME=` (an assignment or an export), `read NAME`, `for NAME in`. */
export const assigned = (code: string): string[] => [
  ...[...code.matchAll(/(?:^|[\s;&|(])(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=/gm)].map((m) => m[1]),
  ...[...code.matchAll(/\b(?:read(?:\s+-\w+)*|for)\s+([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]),
];

/** Every `$NAME` a runnable block uses is set by that guide before it (in a block above, or earlier in the block). */
export function checkBlockVariables(docs: Doc[]): string[] {
  const problems: string[] = [];
  for (const doc of docs) {
    const set = new Set<string>();
    for (const b of shBlocks(doc)) {
      if (b.notRunnable !== null) continue;
      const code = withoutComments(b.code).replace(/'[^']*'/g, "''");
      const names = new Set(assigned(code));
      for (const m of code.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)) {
        const n = m[1];
        if (!set.has(n) && !names.has(n) && !SHELL_VARIABLES.has(n))
          problems.push(`${doc.file}:${b.line}: $${n} is used but the guide never sets it`);
      }
      for (const n of names) set.add(n);
    }
  }
  return [...new Set(problems)];
}

/** The block as the test runs it: the guide variables set in `export` lines get the live server's values. */
export function withValues(code: string, values: GuideValues): string {
  return code
    .split('\n')
    .map((l) =>
      /^\s*export\s/.test(l)
        ? l.replace(
            new RegExp(`(^|\\s)(${GUIDE_VARIABLES.join('|')})=\\S+`, 'g'),
            (_, pre: string, name: keyof GuideValues) => `${pre}${name}=${values[name]}`,
          )
        : l,
    )
    .join('\n');
}

/** The keys of the JSON objects the block's comments say a command prints (`# {"id":"wh_…","secret":…}`). */
export function promisedKeys(code: string): string[] {
  const keys = new Set<string>();
  for (const line of code.split('\n')) {
    const comment = /(?:^|\s)#\s*(\{.*)$/.exec(line)?.[1];
    if (!comment) continue;
    for (const m of comment.matchAll(/"([A-Za-z_][A-Za-z0-9_]*)"\s*:/g)) keys.add(m[1]);
  }
  return [...keys];
}

/** The shell variables the runnable blocks of the documents set (not the configuration's `SVC_…`, `OTEL_…`). */
export const shellVariablesSet = (docs: Doc[]): string[] => [
  ...new Set(
    docs.flatMap((d) =>
      shBlocks(d)
        .filter((b) => b.notRunnable === null)
        .flatMap((b) => assigned(withoutComments(b.code)))
        .filter((n) => !/^(SVC|OTEL)_/.test(n)),
    ),
  ),
];
