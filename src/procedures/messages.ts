import { inWriteTransaction } from '../auth/idempotency.js';
import { z } from 'zod';
import { createMessage, listMessages } from '../domain/messages.js';
import { idOf, nonBlankText, normalizedSince, pageInput, timeListInput, timestamp } from './schemas.js';
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

/** The events these operations fire: their entries of the event catalog (src/domain/catalog.ts). */
export const messageEvents = [
  { type: 'message.created', objectType: 'message', description: 'A message was posted', stable: true, v1: false },
] as const satisfies readonly CatalogEntry[];

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
          description: 'The message text, kept as sent; it holds a non-space character',
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
});
