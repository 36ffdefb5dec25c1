import { inWriteTransaction } from '../auth/idempotency.js';
import { z } from 'zod';
import { createMessage, listMessages } from '../domain/messages.js';
import { listPinnedMessages, pinMessage, unpinMessage, type PinnedMessage } from '../domain/pins.js';
import { idOf, listOf, nonBlankText, normalizedSince, pageInput, timeListInput, timestamp } from './schemas.js';
import { apiProcedure, router } from './trpc.js';
import { checkedListOf } from './checkedListOf.js';
import type { CatalogEntry } from '../domain/catalogEntry.js';
import type { Message } from '../../db/entities/index.js';

// The public shape of a message, and the one mapping from the entity to it.
export const MessageView = z
  .object({
    id: idOf('msg'),
    roomId: idOf('room'),
    authorId: idOf('usr'),
    postedBy: z.enum(['user', 'app', 'agent']).meta({ description: 'Actor that posted it for the author' }),
    body: z.string(),
    createdAt: timestamp,
    agentRunId: idOf('run').nullable().meta({ description: 'The agent run that posted it; null when none did' }),
  })
  .meta({ id: 'Message' });
export const toMessage = (m: Message): z.infer<typeof MessageView> => ({
  id: m.id,
  roomId: m.roomId,
  authorId: m.authorId,
  postedBy: m.postedBy as 'user',
  body: m.body,
  createdAt: m.createdAt,
  agentRunId: m.agentRunId ?? null,
});

// A message's pin, and a pinned message as a room's list of pins shows it: the message, who pinned it and when.
const pinnedBy = {
  pinnedById: idOf('usr').meta({ description: 'Who pinned it' }),
  pinnedAt: timestamp.meta({ description: 'When it was pinned' }),
};
export const PinView = z.object({ messageId: idOf('msg'), ...pinnedBy }).meta({ id: 'Pin' });
export const PinnedMessageView = MessageView.extend(pinnedBy).meta({ id: 'PinnedMessage' });
export const toPinnedMessage = (p: PinnedMessage): z.infer<typeof PinnedMessageView> => ({
  ...toMessage(p),
  pinnedById: p.pinnedById,
  pinnedAt: p.pinnedAt,
});

/** The events these operations fire: their entries of the event catalog (src/domain/catalog.ts). */
// how `svc trigger` fires them: a message posted, then pinned and unpinned
const newMessage = { method: 'POST', path: 'messages', body: { body: 'svc trigger {now}' }, saves: 'message' } as const;
const pin = (method: 'POST' | 'DELETE') => ({ method, path: 'messages/{message}/pin' });

export const messageEvents = [
  {
    type: 'message.created',
    objectType: 'message',
    description: 'A message was posted',
    stable: true,
    v1: false,
    trigger: { calls: [newMessage] },
  },
  {
    type: 'message.pinned',
    objectType: 'message',
    description: 'A message was pinned',
    stable: true,
    v1: false,
    trigger: { calls: [newMessage, pin('POST')] },
  },
  {
    type: 'message.unpinned',
    objectType: 'message',
    description: 'A message was unpinned',
    stable: true,
    v1: false,
    trigger: { calls: [newMessage, pin('POST'), pin('DELETE')] },
  },
] as const satisfies readonly CatalogEntry[];

const pinPath = '/v1/rooms/{roomId}/messages/{messageId}/pin';
const pinInput = z.strictObject({ roomId: idOf('room'), messageId: idOf('msg') });

export const messagesRouter = router({
  list: apiProcedure
    .meta({
      http: { method: 'GET', path: '/v1/rooms/{roomId}/messages' },
      tool: {
        name: 'list_messages',
        title: 'List messages',
        description:
          'Messages of a room, oldest first (order=desc: newest first; since: from a time). Rows carry author names; ask for ids with fields.',
        textOmits: ['id'],
      },
      summary: 'List messages',
      description:
        'Messages of a room, oldest first (`order=desc`: newest first); `since` keeps those created at or after that time.',
      tags: ['messages'],
      scope: 'messages:read',
      units: 1,
      kind: 'read',
      errors: ['not_found', 'room_not_found'],
    })
    .input(z.strictObject({ roomId: idOf('room'), ...pageInput, ...timeListInput }))
    .output(checkedListOf(MessageView))
    .query(async ({ ctx, input }) => {
      const page = await listMessages(
        ctx.services.ds.manager,
        ctx.actor,
        input.roomId,
        { ...input, since: normalizedSince(input.since) },
        ctx.services.secret,
      );
      return { data: page.data.map(toMessage), nextCursor: page.nextCursor };
    }),

  create: apiProcedure
    .meta({
      http: { method: 'POST', path: '/v1/rooms/{roomId}/messages', successStatus: 201 },
      tool: {
        name: 'create_message',
        title: 'Send a message',
        description: 'Posts a message in a room as you.',
      },
      summary: 'Send a message',
      description: 'Posts a message in a room as the calling user. Fires message.created.',
      tags: ['messages'],
      scope: 'messages:write',
      units: 2,
      kind: 'write',
      errors: ['not_found', 'room_not_found', 'forbidden'],
    })
    .input(
      z.strictObject({
        roomId: idOf('room'),
        body: nonBlankText(10_000).meta({
          description: 'The message text, kept as sent (not blank)',
          example: 'Minutes are up for review.',
        }),
      }),
    )
    .output(MessageView)
    .mutation(async ({ ctx, input }) =>
      inWriteTransaction(ctx, async (m) =>
        toMessage(await createMessage(m, ctx.services.now(), ctx.actor, input.roomId, input.body)),
      ),
    ),

  pin: apiProcedure
    .meta({
      http: { method: 'POST', path: pinPath },
      tool: {
        name: 'pin_message',
        title: 'Pin a message',
        description: 'Pins a message (again: no change).',
      },
      summary: 'Pin a message',
      description:
        'Pins a message of the room; any member who may write in the room may. Pinning a pinned message changes nothing and answers its pin. A room holds at most 50 pinned messages: 409 invalid_state (`details.reason` `pin_limit_reached`) past that. Fires message.pinned.',
      tags: ['messages'],
      scope: 'messages:write',
      units: 2,
      kind: 'write',
      idempotent: true,
      errors: ['not_found', 'room_not_found', 'forbidden', 'invalid_state'],
    })
    .input(pinInput)
    .output(PinView)
    .mutation(async ({ ctx, input }) =>
      inWriteTransaction(ctx, (m) => pinMessage(m, ctx.services.now(), ctx.actor, input.roomId, input.messageId)),
    ),

  unpin: apiProcedure
    .meta({
      http: { method: 'DELETE', path: pinPath },
      tool: {
        name: 'unpin_message',
        title: 'Unpin a message',
        description: 'Unpins a message (again: no change).',
      },
      summary: 'Unpin a message',
      description:
        'Unpins a message of the room, whoever pinned it; any member who may write in the room may. A message that is not pinned stays so. Fires message.unpinned when a pin is removed.',
      tags: ['messages'],
      scope: 'messages:write',
      units: 2,
      kind: 'write',
      idempotent: true,
      errors: ['not_found', 'room_not_found', 'forbidden'],
    })
    .input(pinInput)
    .output(z.object({ messageId: idOf('msg'), pinned: z.literal(false) }))
    .mutation(async ({ ctx, input }) =>
      inWriteTransaction(ctx, (m) => unpinMessage(m, ctx.services.now(), ctx.actor, input.roomId, input.messageId)),
    ),

  listPins: apiProcedure
    .meta({
      http: { method: 'GET', path: '/v1/rooms/{roomId}/pins' },
      tool: { name: 'list_pinned_messages', title: 'List pinned messages', description: "A room's pinned messages." },
      summary: 'List pinned messages',
      description:
        'The pinned messages of a room in the order they were pinned (at most 50, so the first page of the default size holds them all), each with who pinned it and when.',
      tags: ['messages'],
      scope: 'messages:read',
      units: 1,
      kind: 'read',
      errors: ['not_found', 'room_not_found'],
    })
    .input(z.strictObject({ roomId: idOf('room'), ...pageInput }))
    .output(listOf(PinnedMessageView))
    .query(async ({ ctx, input }) => {
      const page = await listPinnedMessages(
        ctx.services.ds.manager,
        ctx.actor,
        input.roomId,
        input,
        ctx.services.secret,
      );
      return { data: page.data.map(toPinnedMessage), nextCursor: page.nextCursor };
    }),
});
