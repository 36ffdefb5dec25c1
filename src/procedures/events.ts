import { z } from 'zod';
import { EVENT_CATALOG, OBJECT_TYPES, type ObjectType } from '../domain/catalog.js';
import { listEvents, readableEvent, type LoggedEvent } from '../domain/eventLog.js';
import { openEventStream, STREAM_SINCE_MAX_MS } from '../domain/eventStreams.js';
import { idOf, normalizedSince, pageInput, text, timeListInput, timestamp } from './schemas.js';
import { apiProcedure, router } from './trpc.js';
import { requireRoom } from '../domain/access.js';
import { LAST_EVENT_ID_HEADER } from '../http/headers.js';
import { notFound, ruleViolation } from '../domain/errors.js';
import { checkedListOf } from './checkedListOf.js';

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
      docs: {
        tool: '`stream_events` (REST only: no MCP tool; MCP has `subscriptions/listen`)',
        units: '1 when it opens',
        what: 'The event log as server-sent events (a reconnect resumes after the last event)',
      },
      description: `Server-sent events of the rooms the caller can read, as they are committed. One unit when it opens; waiting costs nothing. Resume with \`${LAST_EVENT_ID_HEADER}\`: the 5 s before that event come again (skip by id). At most \`SVC_MCP_MAX_STREAMS\` open per credential (429).`,
      tags: ['events'],
      scope: 'events:read',
      units: 1,
      kind: 'read',
      restOnly: true,
      errors: ['not_found', 'room_not_found', 'rate_limited', 'rule_violation'],
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
            description: `Start here, not now (at most ${STREAM_SINCE_MAX_MS / 60_000} min ago)`,
          }),
        lastEventId: text(100)
          .optional()
          .meta({ description: `Resume after this event, as \`${LAST_EVENT_ID_HEADER}\` does` }),
      }),
    )
    .output(z.object({}))
    .query(async ({ ctx, input }) => {
      const m = ctx.services.ds.manager;
      if (input.roomId) await requireRoom(m, ctx.actor, input.roomId, 'read');
      let after: LoggedEvent | null = null;
      let since: number | undefined;
      // lastEventId, when given, is where the stream resumes: since is for a first connection
      if (input.since !== undefined && !input.lastEventId) {
        since = new Date(input.since).getTime();
        if (ctx.services.now().getTime() - since > STREAM_SINCE_MAX_MS)
          throw ruleViolation(
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
