import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Command, OptionSpec } from './command.js';
import { commands } from './commands/index.js';

// `svc help`, `svc help <command>`, `svc <command> --help`, `svc --version`, and the reading of a command line
// into a command and its options, with a usage error (exit 2) that names the nearest valid command or option.
// node:util parseArgs reads the options; each option's meaning is its spec's `description` (command.ts).

/** Options every command takes, beside its own. */
export const COMMON_OPTIONS: Record<string, OptionSpec> = {
  json: { type: 'boolean', description: 'print exactly one JSON object on stdout (errors go to stderr)' },
  help: { type: 'boolean', description: "print this command's usage and options" },
};

const groups = [...new Set(commands.filter((c) => c.name.includes(' ')).map((c) => c.name.split(' ')[0]))];
const inGroup = (group: string) => commands.filter((c) => c.name.split(' ')[0] === group);

/** The package's version, from the package.json above this module (the sources or the compiled CLI). */
function version(): string {
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: string; version: string };
      if (pkg.name === 'svc') return pkg.version;
    } catch {
      /* not here: one folder up */
    }
    if (dir.pathname === '/') return 'unknown';
  }
}

const table = (rows: [string, string][]) => {
  const width = Math.min(28, Math.max(...rows.map(([a]) => a.length)));
  return rows.map(([a, b]) => `  ${a.padEnd(width)}  ${b}`.trimEnd());
};
const summaryOf = (c: Command) => c.summary ?? c.usage.replace(/^svc \S+( \S+)?\s*/, '');

/** `svc help`: every command with what it does. */
function help(): string {
  return [
    `svc ${version()}: the operator command line, on the database of DATABASE_URL (listen and trigger: on a server, through its API)`,
    '',
    'Usage: svc <command> [options] [--json]',
    "       svc help <command>        a command's usage and options (or: svc <command> --help)",
    '       svc --version',
    '',
    'Commands:',
    ...table(commands.map((c) => [c.name, summaryOf(c)])),
    '',
    'Through npm: npx svc help, npx svc --help, npx svc <command> --help.',
  ].join('\n');
}

/** `svc help webhook`, `svc webhook --help`: the commands of one group. */
function groupHelp(group: string): string {
  return [
    `Usage: svc ${group} <action> [options] [--json]`,
    '',
    'Commands:',
    ...table(inGroup(group).map((c) => [c.name, summaryOf(c)])),
    '',
    `Run svc help ${group} <action> for a command's options.`,
  ].join('\n');
}

/** The placeholder the usage line gives an option (`--room ROOM` gives `ROOM`), else `VALUE`. */
function placeholder(cmd: Command, name: string): string {
  const m = new RegExp(`--${name}[ =]("[^"]*"|[^\\s\\[\\]]+)`).exec(cmd.usage);
  // a list of choices or an example too long to align stands as the option's own name
  if (!m || m[1].startsWith('--')) return 'VALUE';
  return m[1].includes('|') || m[1].length > 12 ? name.toUpperCase() : m[1];
}

/** `svc help <command>`, `svc <command> --help`: its usage and every option's meaning. */
export function commandHelp(cmd: Command): string {
  const rows = Object.entries({ ...cmd.options, ...COMMON_OPTIONS }).map(([name, o]): [string, string] => [
    `${name === 'help' ? '-h, ' : ''}--${name}${o.type === 'string' ? ` ${placeholder(cmd, name)}` : ''}`,
    o.description,
  ]);
  return [
    `Usage: ${cmd.usage}`,
    ...(cmd.summary ? ['', `${cmd.summary[0].toUpperCase()}${cmd.summary.slice(1)}.`] : []),
    '',
    'Options:',
    ...table(rows),
  ].join('\n');
}

/** The nearest of `candidates` to a mistyped word, if one is near enough to be what was meant. */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = c.startsWith(word) && word.length >= 3 ? 1 : editDistance(word, c);
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

/** Levenshtein distance with a transposition counted as one edit (a typo's usual shape). */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** One line for a command that does not exist, naming the nearest one, then what there is. */
function unknownCommand(argv: string[]): string {
  const [first, second] = argv;
  const oneWord = commands.filter((c) => !c.name.includes(' ')).map((c) => c.name);
  let guess: string | undefined;
  if (groups.includes(first)) {
    guess =
      second === undefined || second.startsWith('-')
        ? undefined
        : nearest(
            second,
            inGroup(first).map((c) => c.name.split(' ')[1]),
          );
    if (guess) guess = `${first} ${guess}`;
    const what =
      second === undefined || second.startsWith('-')
        ? `svc ${first} needs an action`
        : `Unknown command: svc ${first} ${second}`;
    return `${what}${guess ? `. Did you mean: svc ${guess}?` : ''}\n\n${groupHelp(first)}`;
  }
  const group = nearest(first, [...groups, ...oneWord, 'help']);
  if (group && groups.includes(group) && second !== undefined && !second.startsWith('-')) {
    const action = inGroup(group).map((c) => c.name.split(' ')[1]);
    guess = `${group} ${action.includes(second) ? second : (nearest(second, action) ?? '<action>')}`;
  } else guess = group;
  const typed = second === undefined || second.startsWith('-') ? first : `${first} ${second}`;
  return `Unknown command: svc ${typed}${guess ? `. Did you mean: svc ${guess}?` : ''}\n\nRun svc help for every command.`;
}

/** What one `svc` run does before any command: help, the version, or the command and its parsed arguments. */
export type Parsed =
  | { kind: 'print'; text: string }
  | { kind: 'usage'; text: string }
  | {
      kind: 'run';
      cmd: Command;
      values: Record<string, string | string[] | boolean | undefined>;
      positionals: string[];
    };

/** Reads argv: `help …`, `--version`, a group or a command and its options. */
export function parseCommandLine(argv: string[]): Parsed {
  if (!argv.length) return { kind: 'usage', text: help() };
  const [first, second] = argv;
  if (first === 'help' || first === '--help' || first === '-h') {
    const topic = first === 'help' ? argv.slice(1).filter((a) => !a.startsWith('-')) : [];
    if (!topic.length) return { kind: 'print', text: help() };
    const cmd = commands.find((c) => c.name === topic.slice(0, c.name.split(' ').length).join(' '));
    if (cmd) return { kind: 'print', text: commandHelp(cmd) };
    if (groups.includes(topic[0]) && topic.length === 1) return { kind: 'print', text: groupHelp(topic[0]) };
    return { kind: 'usage', text: unknownCommand(topic) };
  }
  if (first === '--version' || first === '-v') return { kind: 'print', text: version() };
  // commands are one word (`worker`) or two (`org create`)
  const cmd = commands.find((c) => c.name === argv.slice(0, c.name.split(' ').length).join(' '));
  if (!cmd) {
    if (groups.includes(first) && (second === '--help' || second === '-h'))
      return { kind: 'print', text: groupHelp(first) };
    return { kind: 'usage', text: unknownCommand(argv) };
  }
  const args = argv.slice(cmd.name.split(' ').length);
  const usage = (message: string): Parsed => ({
    kind: 'usage',
    text: `${message}\nUsage: ${cmd.usage}\nRun svc help ${cmd.name} for every option.`,
  });
  const options = { ...cmd.options, ...COMMON_OPTIONS, help: { ...COMMON_OPTIONS.help, short: 'h' } };
  // a first lenient pass finds --help anywhere and names the nearest option to an unknown one; the strict
  // pass then reports what remains (a missing value, a stray argument) in parseArgs's own words
  const loose = parseArgs({ args, options, strict: false, allowPositionals: true, tokens: true });
  if (loose.values.help === true) return { kind: 'print', text: commandHelp(cmd) };
  for (const t of loose.tokens) {
    if (t.kind === 'option' && !(t.name in options)) {
      const guess = nearest(t.name, Object.keys(options));
      return usage(
        `Unknown option ${t.rawName.startsWith('--') ? '--' : '-'}${t.name} for svc ${cmd.name}${guess ? `. Did you mean --${guess}?` : ''}`,
      );
    }
  }
  try {
    const { values, positionals } = parseArgs({ args, options, strict: true, allowPositionals: !!cmd.remote });
    return { kind: 'run', cmd, values: values as Record<string, string | string[] | boolean | undefined>, positionals };
  } catch (e) {
    return usage((e as Error).message);
  }
}
