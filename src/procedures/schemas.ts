import { z } from 'zod';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../domain/paging.js';

/** A prefixed identifier (`room_01J…`). */
export const idOf = (prefix: string) =>
  z.string().regex(new RegExp(`^${prefix}_[0-9A-Za-z]{1,64}$`), `must be a ${prefix}_ identifier`).meta({
    example: `${prefix}_01KAR3V6X5Q2Z8N4M7P9W1T3YB`,
  });

export const timestamp = z.string().meta({ description: 'ISO 8601 UTC with milliseconds', example: '2026-11-22T09:30:00.000Z' });
export const date = z.iso.date().meta({ description: 'Calendar date YYYY-MM-DD', example: '2026-12-01' });

/** `limit` and `cursor` of every list (CONTRACT §4: default 50, max 200). Query strings are coerced. */
export const pageInput = {
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_LIMIT)
    .optional()
    .meta({ description: `Page size, 1-${MAX_LIMIT} (default ${DEFAULT_LIMIT})`, example: 50 }),
  cursor: z.string().min(1).max(1024).optional().meta({ description: 'Opaque cursor from nextCursor of the previous page' }),
};

/** The list envelope of spec 2.3. */
export const listOf = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), nextCursor: z.string().nullable().meta({ description: 'Pass as cursor for the next page; null on the last page' }) });

/** The error envelope of spec 2.4. */
export const ErrorEnvelope = z
  .object({
    error: z.object({
      code: z.string().meta({ example: 'not_found' }),
      message: z.string().meta({ example: 'Room not found' }),
      requestId: z.string().meta({ example: 'req_01KAR3V6X5Q2Z8N4M7P9W1T3YB' }),
      details: z.record(z.string(), z.unknown()),
    }),
  })
  .meta({ id: 'Error' });

/** `order` and `since` of the time-ordered lists (messages, tasks, events). */
export const timeListInput = {
  order: z.enum(['asc', 'desc']).optional().meta({
    description: 'asc: oldest first (the default); desc: newest first. A cursor continues the order it was issued in.',
    example: 'desc',
  }),
  since: z.iso.datetime({ offset: true }).optional().meta({ description: 'Only items created at or after this ISO 8601 time', example: '2026-11-22T09:30:00.000Z' }),
};

/** `since` as stored times compare: fixed-width ISO 8601 UTC text. */
export const normalizedSince = (since: string | undefined): string | undefined => (since === undefined ? undefined : new Date(since).toISOString());
