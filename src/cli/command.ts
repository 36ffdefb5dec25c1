import type { Runtime } from '../runtime.js';

/**
 * One option of a command: the node:util parseArgs spec (`multiple` for a repeatable flag) and what it means,
 * one line, shown by `svc help <command>` and `svc <command> --help`.
 */
export interface OptionSpec {
  type: 'string' | 'boolean';
  multiple?: boolean;
  /** e.g. `the room whose events it receives`: lower case, no final full stop. */
  description: string;
}

/** One operator command (`svc <group> <action>`): its options and what it prints as JSON. */
export interface Command {
  /** e.g. `org create` */
  name: string;
  usage: string;
  /** What the command does, one line, for `svc help` (the usage line stands in when it is missing). */
  summary?: string;
  options: Record<string, OptionSpec>;
  /** A list command (`{"data":[…]}`): the fields shown as columns without `--json`, in order. */
  columns?: string[];
  /** A command on the database (`DATABASE_URL`): most of them. */
  run?(args: Record<string, string | string[] | boolean | undefined>, rt: Runtime): Promise<Record<string, unknown>>;
  /**
   * A command against a server through the public API (`svc listen`, `svc trigger`): no database is opened.
   * `positionals` are the words after the command name (allowed only for these commands).
   */
  remote?(
    args: Record<string, string | string[] | boolean | undefined>,
    positionals: string[],
  ): Promise<Record<string, unknown>>;
}

/** A usage error: printed to stderr with exit code 2. */
export class UsageError extends Error {}

export function required(args: Record<string, unknown>, name: string): string {
  const v = args[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

export function optional(args: Record<string, unknown>, name: string): string | undefined {
  const v = args[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], name: string): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value))
    throw new UsageError(`--${name} must be one of ${allowed.join(', ')}`);
  return value as T;
}
