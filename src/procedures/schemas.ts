import { z } from 'zod';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../domain/paging.js';

/**
 * How a schema reads in MCP tool schemas where it differs from OpenAPI: its text (null: none) and a default to state.
 */
export interface ModelText {
  description: string | null;
  default?: unknown;
}
const modelTexts = new WeakMap<z.ZodType, ModelText>();

/**
 * Gives a schema its own text in MCP tool schemas (a model's context is paid per token), while the OpenAPI
 * document keeps its `description`. Call it last: `.meta()`, `.optional()` … return new schemas.
 */
export function forModel<T extends z.ZodType>(
  schema: T,
  description: string | null,
  extra: Omit<ModelText, 'description'> = {},
): T {
  modelTexts.set(schema, { description, ...extra });
  return schema;
}

/** What `forModel` gave this schema, if anything. */
export const modelTextOf = (schema: z.ZodType): ModelText | undefined => modelTexts.get(schema);

const NOUNS: Record<string, string> = {
  usr: 'user',
  org: 'organization',
  room: 'room',
  msg: 'message',
  task: 'task',
  rec: 'meeting record',
  apr: 'approval',
  file: 'file',
  wh: 'webhook',
  whd: 'webhook delivery',
  acn: 'agent connector',
  run: 'agent run',
};

/** A prefixed identifier (`room_01J…`). */
export const idOf = (prefix: string) =>
  z
    .string()
    .max(prefix.length + 65)
    .regex(new RegExp(`^${prefix}_[0-9A-Za-z]{1,64}$`), `must be a ${prefix}_ identifier`)
    .meta({
      description: `Identifier of a ${NOUNS[prefix] ?? prefix} (\`${prefix}_…\`)`,
      example: `${prefix}_01KAR3V6X5Q2Z8N4M7P9W1T3YB`,
    });

export const timestamp = z
  .string()
  .meta({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds', example: '2026-11-22T09:30:00.000Z' });

// Every string of every input is free of NUL (U+0000): the pipeline refuses it before the schema is read, and the
// schemas say so, so that the OpenAPI document and the MCP tools state it too.
/* eslint-disable no-control-regex -- NUL is exactly what these patterns name */
const NO_NUL = /^[^\u0000]*$/;
const NON_BLANK = /^[^\u0000]*[^\s\u0000][^\u0000]*$/;
/* eslint-enable no-control-regex */

/** Free text of at most `max` characters, no NUL. */
export const text = (max: number) => z.string().max(max).regex(NO_NUL, 'must not contain NUL characters');

/** Text with at least one non-space character, kept as given, at most `max` characters, no NUL. */
export const nonBlankText = (max: number) =>
  z.string().min(1).max(max).regex(NON_BLANK, 'must hold a non-space character and no NUL');

/** A name or title: trimmed, then 1 to `max` characters with a non-space one, no NUL. */
export const trimmedName = (max: number) =>
  z.string().trim().min(1).max(max).regex(NON_BLANK, 'must hold a non-space character and no NUL');

export const date = z.iso.date().max(10).meta({ description: 'Calendar date YYYY-MM-DD', example: '2026-12-01' });

/**
 * `limit` and `cursor` of every list (default 50, max 200). `limit` is a JSON integer: over REST the
 * adapter reads a query parameter's plain decimal digits as one (rest/restRouter.ts), and refuses anything else.
 */
export const pageInput = {
  limit: forModel(
    z
      .number()
      .int()
      .min(1)
      .max(MAX_LIMIT)
      .optional()
      .meta({ description: `Page size, 1-${MAX_LIMIT} (default ${DEFAULT_LIMIT})`, example: 50 }),
    // (the bounds say what a model may ask; a call without it gets the default, as over REST)
    null,
  ),
  cursor: forModel(
    z.string().min(1).max(1024).regex(NO_NUL).optional().meta({
      description:
        'Opaque cursor: the nextCursor of the previous page, unchanged. Any other value answers 400 validation_error.',
    }),
    null,
  ),
};

/** The list envelope (docs/rest-api.md#lists-and-search). */
export const listOf = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item),
    nextCursor: z.string().nullable().meta({ description: "The next page's cursor; null on the last page" }),
  });

/** `order` and `since` of the time-ordered lists (messages, tasks, events). */
export const timeListInput = {
  order: forModel(
    z.enum(['asc', 'desc']).optional().meta({
      description:
        'asc: oldest first (the default); desc: newest first. A cursor continues the order it was issued in.',
      example: 'desc',
    }),
    null,
    { default: 'asc' },
  ),
  since: forModel(
    z.iso
      .datetime({ offset: true })
      .max(64)
      .optional()
      .meta({ description: 'Only items created at or after this ISO 8601 time', example: '2026-11-22T09:30:00.000Z' }),
    'Created at or after',
  ),
};

/** `since` as stored times compare: fixed-width ISO 8601 UTC text. */
export const normalizedSince = (since: string | undefined): string | undefined =>
  since === undefined ? undefined : new Date(since).toISOString();
