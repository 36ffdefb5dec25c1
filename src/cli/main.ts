import { type Command, UsageError } from './command.js';
import { parseCommandLine } from './usage.js';

// Help and usage errors load nothing more than the command table; the configuration, the database layer and the
// domain are loaded (import()) by the command that needs them.

/** Retries of a transaction refused as busy: the last waits 1.6 s, each after the database's own 10 s wait. */
const CLI_TRANSACTION_RETRIES = 5;

const cell = (v: unknown): string =>
  v === null || v === undefined
    ? '-'
    : Array.isArray(v)
      ? v.join(',') || '-'
      : typeof v === 'object'
        ? JSON.stringify(v)
        : String(v);

/** A list (`{"data":[…]}`) as a table of the command's columns, one row a line. */
function printTable(rows: Record<string, unknown>[], columns: string[]): void {
  if (!rows.length) return void process.stdout.write('(none)\n');
  const cells = [columns, ...rows.map((r) => columns.map((c) => cell(r[c])))];
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => line[i].length)));
  const text = cells
    .map((line) =>
      line
        .map((c, i) => c.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
  process.stdout.write(`${text}\n`);
}

function printHuman(cmd: Command, result: Record<string, unknown>): void {
  if (cmd.columns && Array.isArray(result.data))
    return printTable(result.data as Record<string, unknown>[], cmd.columns);
  const entries = Object.entries(result);
  if (!entries.length) return void process.stdout.write('ok\n');
  for (const [k, v] of entries)
    process.stdout.write(`${k}: ${typeof v === 'string' ? v : JSON.stringify(v, null, 2)}\n`);
}

/** The operator command line. With --json, exactly one JSON object on stdout. */
async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandLine(argv);
  if (parsed.kind === 'print') {
    process.stdout.write(`${parsed.text}\n`);
    return 0;
  }
  if (parsed.kind === 'usage') {
    process.stderr.write(`${parsed.text}\n`);
    return 2;
  }
  const { cmd, values, positionals } = parsed;
  if (cmd.remote) return runRemote(cmd, values, positionals);
  const { ConfigError, loadConfig } = await import('../config.js');
  let config;
  try {
    config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' });
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      return 1;
    }
    throw e;
  }
  // only the long-running worker keeps metrics (served on SVC_METRICS_PORT) and traces. Beside a running server
  // on the same SQLite file: wait for its writes (busy timeout, write lock taken at the start of each transaction:
  // db/transaction.ts) and run a transaction again when the lock stayed busy
  const { openRuntime } = await import('../runtime.js');
  const rt = await openRuntime(config, { metrics: cmd.name === 'worker', transactionRetries: CLI_TRANSACTION_RETRIES });
  try {
    return await printOutcome(cmd, values, () => cmd.run!(values, rt));
  } finally {
    await rt.close();
  }
}

/**
 * Runs a command's work and prints its result (with `--json`, exactly one JSON object on stdout); errors go to
 * stderr. The exit code: 0, 1 for an error, 2 for a usage error.
 */
async function printOutcome(
  cmd: Command,
  values: Record<string, unknown>,
  work: () => Promise<Record<string, unknown>>,
): Promise<number> {
  try {
    const result = await work();
    if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
    else printHuman(cmd, result);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`${e.message}\nUsage: ${cmd.usage}\nRun svc help ${cmd.name} for every option.\n`);
      return 2;
    }
    const { DomainError } = await import('../domain/errors.js');
    if (e instanceof DomainError) {
      process.stderr.write(`error: ${e.code}: ${e.message}${e.details ? ` ${JSON.stringify(e.details)}` : ''}\n`);
      return 1;
    }
    process.stderr.write(`error: ${(e as Error).message}\n`);
    return 1;
  }
}

/** A command against a server through the public API: no configuration, no database. */
async function runRemote(
  cmd: Command,
  values: Record<string, string | string[] | boolean | undefined>,
  positionals: string[],
): Promise<number> {
  return printOutcome(cmd, values, () => cmd.remote!(values, positionals));
}

/**
 * Ends the process once everything written to stdout and stderr has been handed to the reader. `process.exit`
 * right after a large write to a pipe drops what the pipe had not taken yet; a write's callback runs once it and
 * everything before it is flushed.
 */
export function exitAfterOutput(code: number): void {
  process.exitCode = code;
  let pending = 2;
  const flushed = () => {
    if (--pending === 0) process.exit(code);
  };
  for (const stream of [process.stdout, process.stderr]) {
    if (stream.destroyed || !stream.writable) flushed();
    else stream.write('', flushed);
  }
}

// a reader that stops early (`svc … | head`) closes the pipe: what is left to write has nowhere to go
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);

main(process.argv.slice(2)).then(exitAfterOutput, (e) => {
  process.stderr.write(`error: ${(e as Error).message}\n`);
  exitAfterOutput(1);
});
