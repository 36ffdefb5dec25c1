import { z } from 'zod';
import { DomainError } from '../domain/errors.js';
import { search, type SearchType } from '../domain/search.js';
import type { Scope } from '../domain/scopes.js';
import { idOf, listOf, pageInput, timestamp } from './schemas.js';
import { apiProcedure, router } from './trpc.js';
import { MessageView, toMessage } from './messages.js';
import { TaskView, toTask } from './tasks.js';

const SEARCH_TYPES = ['messages', 'tasks'] as const satisfies readonly SearchType[];
/** The scope each type of result needs; the operation itself needs `messages:read`. */
const TYPE_SCOPES: Record<SearchType, Scope> = { messages: 'messages:read', tasks: 'tasks:read' };

export const SearchHitView = z
  .object({
    type: z.enum(['message', 'task']),
    roomId: idOf('room'),
    createdAt: timestamp,
    // (no description on these two: a described copy would be inlined in the document instead of referenced)
    message: MessageView.optional(),
    task: TaskView.optional(),
  })
  .meta({
    id: 'SearchHit',
    description: 'A message (`message` set, when type is message) or a task (`task` set, when type is task)',
  });

export const searchRouter = router({
  query: apiProcedure
    .meta({
      http: { method: 'GET', path: '/v1/search' },
      tool: {
        name: 'search_content',
        title: 'Search messages and tasks',
        description:
          'Finds messages and tasks containing `q` (case-insensitive) across rooms you can read, newest first.',
      },
      summary: 'Search messages and tasks',
      docs: { scope: '`messages:read` (and `tasks:read` for tasks)' },
      description:
        'Messages (body) and tasks (title, description) containing `q` (case-insensitive substring) in the rooms the caller can read, newest first. ' +
        '`types` is a comma-separated list of `messages` and `tasks` (default: both, or only messages when the credential lacks tasks:read); tasks need tasks:read.',
      tags: ['search'],
      scope: 'messages:read',
      units: 2,
      kind: 'read',
    })
    .input(
      z.strictObject({
        q: z
          .string()
          .trim()
          .min(1)
          .max(200)
          .meta({ description: 'Text to look for', examples: ['release notes'] }),
        types: z
          .string()
          .max(100)
          .regex(/^(messages|tasks)(,(messages|tasks))*$/, 'a comma-separated list of messages and tasks')
          .optional()
          .meta({ description: 'Comma-separated: messages, tasks', examples: ['messages,tasks'] }),
        ...pageInput,
      }),
    )
    .output(listOf(SearchHitView))
    .query(async ({ ctx, input }) => {
      const granted = ctx.actor.scopes;
      const asked = input.types
        ? ([...new Set(input.types.split(','))] as SearchType[])
        : SEARCH_TYPES.filter((t) => granted.includes(TYPE_SCOPES[t]));
      const missing = asked.map((t) => TYPE_SCOPES[t]).filter((s) => !granted.includes(s));
      if (missing.length) {
        throw new DomainError('insufficient_scope', `Missing scope: ${missing.join(' ')}`, {
          details: { required: missing, granted },
        });
      }
      const page = await search(
        ctx.services.ds.manager,
        ctx.actor,
        { q: input.q, types: asked, limit: input.limit, cursor: input.cursor },
        ctx.services.secret,
      );
      return {
        data: page.data.map((h) =>
          h.type === 'message'
            ? {
                type: 'message' as const,
                roomId: h.item.roomId,
                createdAt: h.item.createdAt,
                message: toMessage(h.item),
              }
            : { type: 'task' as const, roomId: h.item.roomId, createdAt: h.item.createdAt, task: toTask(h.item) },
        ),
        nextCursor: page.nextCursor,
      };
    }),
});
