import { z } from 'zod';
import { EVENT_CATALOG, OBJECT_TYPES, type ObjectType } from '../domain/catalog.js';
import { listEvents, readableEvent, type LoggedEvent } from '../domain/eventLog.js';
import { openEventStream, STREAM_SINCE_MAX_MS } from '../domain/eventStreams.js';
import { idOf, normalizedSince, pageInput, text, timeListInput, timestamp } from './schemas.js';
import { apiProcedure, router } from './trpc.js';
import { requireRoom } from '../domain/access.js';
import { notFound, validationError } from '../domain/errors.js';
import { checkedListOf } from './views.js';

export const EventTypeView = z
  .object({ type: z.string().meta({ example: 'record.created' }), description: z.string(), stable: z.boolean() })
  .meta({ id: 'EventType' });

export const EventView = z
  .object({
    id: z.string().meta({ example: 'evt_3q2-7wEVjvXq0mFz7f4ZTA' }),
    type: z.string(),
    createdAt: timestamp,
    organizationId: idOf('org').nullable(),
    roomId: idOf('room'),
    actor: z.enum(['user', 'app', 'agent']),
    data: z.object({ object: z.object({ id: z.string(), type: z.enum(OBJECT_TYPES) }) }),
  })
  .meta({ id: 'EventObject' });

/** An event as the log and the stream show it. */
export const eventView = (e: LoggedEvent): z.infer<typeof EventView> => ({
  id: e.id,
  type: e.type,
  createdAt: e.createdAt,
  organizationId: e.organizationId,
  roomId: e.roomId,
  actor: e.actor as 'user',
  data: { object: { id: e.objectId, type: e.objectType as ObjectType } },
});

export const eventsRouter = router({
  types: apiProcedure
    .meta({
      http: { method: 'GET', path: '/v1/event-types' },
      tool: {
        name: 'list_event_types',
        title: 'List event types',
        description: 'Event types that can be subscribed to; preview types (stable=false) never fire.',
      },
      summary: 'The event catalog',
      description: 'Event types that can be subscribed to. Preview types (stable=false) never fire.',
      tags: ['events'],
      scope: 'events:read',
      units: 1,
      kind: 'read',
    })
    .input(z.strictObject({}))
    .output(z.object({ data: z.array(EventTypeView), nextCursor: z.null() }))
    .query(() => ({
      data: EVENT_CATALOG.map(({ type, description, stable }) => ({ type, description, stable })),
      nextCursor: null,
    })),

  list: apiProcedure
    .meta({
      http: { method: 'GET', path: '/v1/events' },
      tool: {
        name: 'list_events',
        title: 'List events',
        description:
          'The event log of rooms you can read (id-only payloads), oldest first; filter by type, roomId or since.',
      },
      summary: 'The event log',
      description:
        'Events of the rooms the caller can read, oldest first (`order=desc`: newest first). ID-only payloads; fetch details through the API. `since` keeps events created at or after that time (how `svc listen` follows the log).',
      tags: ['events'],
      scope: 'events:read',
      units: 1,
      kind: 'read',
    })
    .input(
      z.strictObject({
        ...pageInput,
        type: text(100)
          .optional()
          .meta({ description: 'Only events of this type (e.g. record.created)', example: 'record.created' }),
        roomId: idOf('room').optional().meta({ description: 'Only events of this room' }),
        ...timeListInput,
      }),
    )
    .output(checkedListOf(EventView))
    .query(async ({ ctx, input }) => {
      const page = await listEvents(
        ctx.services.ds.manager,
        ctx.actor,
        { ...input, since: normalizedSince(input.since) },
        ctx.services.secret,
      );
      return { data: page.data.map(eventView), nextCursor: page.nextCursor };
    }),

  stream: apiProcedure
    .meta({
      http: { method: 'GET', path: '/v1/events/stream', stream: true },
      tool: {
        name: 'stream_events',
        title: 'Stream events',
        description: 'REST only: the event log as server-sent events.',
      },
      summary: 'The event log as a stream',
      description:
        'The events of the rooms the caller can read as they are committed, as server-sent events (`text/event-stream`): one `data:` line per event, the event object of `GET /v1/events`, with the event id as the SSE `id`. Opening the stream costs one unit and writes one audit row; waiting and the events it brings cost nothing. From now on, from `since` (at most an hour ago), or after the event named by the `Last-Event-ID` header (or `lastEventId`): a stream resumed after an interruption also repeats the events of the few seconds before that event, which a client skips by id. A comment line every 15 s keeps it alive. At most `SVC_MCP_MAX_STREAMS` streams are open per credential (with its MCP subscriptions), across processes; more: 429. The stream ends when its credential stops being valid (revoked, expired) or the server shuts down; reconnect with `Last-Event-ID`. REST only (MCP has `subscriptions/listen`).',
      tags: ['events'],
      scope: 'events:read',
      units: 1,
      kind: 'read',
      restOnly: true,
      errors: ['not_found', 'room_not_found', 'rate_limited'],
    })
    .input(
      z.strictObject({
        roomId: idOf('room').optional().meta({ description: 'Only events of this room' }),
        type: text(100)
          .optional()
          .meta({ description: 'Only events of this type (e.g. record.created)', example: 'record.created' }),
        since: z.iso
          .datetime({ offset: true })
          .max(64)
          .optional()
          .meta({
            description: `Start at this ISO 8601 time instead of now, at most ${STREAM_SINCE_MAX_MS / 60_000} minutes ago (older history: \`GET /v1/events\`); not with lastEventId`,
            example: '2026-11-22T09:30:00.000Z',
          }),
        lastEventId: text(100).optional().meta({
          description:
            'Resume after this event (its `id`); the `Last-Event-ID` header, which EventSource sends on reconnecting, does the same',
          example: 'evt_3q2-7wEVjvXq0mFz7f4ZTA',
        }),
      }),
    )
    .output(z.object({}))
    .query(async ({ ctx, input }) => {
      const m = ctx.services.ds.manager;
      if (input.roomId) await requireRoom(m, ctx.actor, input.roomId, 'read');
      let after: LoggedEvent | null = null;
      let since: number | undefined;
      if (input.since !== undefined) {
        if (input.lastEventId) throw validationError('Give since or lastEventId (Last-Event-ID), not both');
        since = new Date(input.since).getTime();
        if (ctx.services.now().getTime() - since > STREAM_SINCE_MAX_MS)
          throw validationError(
            `since is at most ${STREAM_SINCE_MAX_MS / 60_000} minutes ago on a stream; page older events with GET /v1/events`,
          );
      }
      if (input.lastEventId) {
        after = await readableEvent(m, ctx.actor, input.lastEventId);
        if (!after) throw notFound('Event');
      }
      ctx.out.eventStream = await openEventStream(ctx.services, ctx.actor, {
        roomId: input.roomId,
        type: input.type,
        after,
        since,
      });
      return {};
    }),
});
