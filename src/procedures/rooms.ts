import { inWriteTransaction } from '../auth/idempotency.js';
import { z } from 'zod';
import { requireRoom } from '../domain/access.js';
import { addMember, createRoomAs, listMembers, listRooms, updateRoom } from '../domain/rooms.js';
import { forModel, idOf, pageInput, timestamp, trimmedName } from './schemas.js';
import { apiProcedure, router } from './trpc.js';
import { checkedListOf } from './checkedListOf.js';
import type { CatalogEntry } from '../domain/catalogEntry.js';
import type { Room, RoomMember } from '../../db/entities/index.js';

// The public shapes of a room and a member, and the one mapping from each entity to it.
export const RoomView = z
  .object({
    id: idOf('room'),
    name: z.string(),
    roomType: z.literal(0).meta({ description: '0: ordinary room (direct messages are never shown)' }),
    organizationId: idOf('org').nullable(),
    createdById: idOf('usr'),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Room' });
export const toRoom = (r: Room): z.infer<typeof RoomView> => ({
  id: r.id,
  name: r.name,
  roomType: 0,
  organizationId: r.organizationId,
  createdById: r.createdById,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

export const MemberView = z
  .object({ roomId: idOf('room'), userId: idOf('usr'), addedAt: timestamp })
  .meta({ id: 'RoomMember' });
export const toMember = (m: RoomMember): z.infer<typeof MemberView> => ({
  roomId: m.roomId,
  userId: m.userId,
  addedAt: m.createdAt,
});

const roomName = forModel(
  trimmedName(200).meta({ description: "The room's name (trimmed)", example: 'Design review' }),
  null,
);

/** The events these operations fire: their entries of the event catalog (src/domain/catalog.ts). */
export const roomEvents = [
  {
    type: 'room.member.added',
    objectType: 'room',
    description: 'A member was added to a room',
    stable: true,
    v1: true,
    trigger: {
      calls: [{ method: 'POST', path: 'members', body: { userId: '{user}' } }],
      needsUser: "a user of the room's organization who is not a member yet",
    },
  },
  {
    type: 'room.created',
    objectType: 'room',
    description: 'A room was created (preview: never delivered, a new room has no subscriber)',
    stable: false,
    v1: false,
  },
] as const satisfies readonly CatalogEntry[];

export const roomsRouter = router({
  list: apiProcedure
    .meta({
      http: { method: 'GET', path: '/v1/rooms' },
      tool: {
        name: 'list_rooms',
        title: 'List rooms',
        description: 'Rooms you can read, oldest first. Start here to find a roomId.',
      },
      summary: 'List rooms',
      description: 'Ordinary rooms the caller can read in its organization or personal scope, oldest first.',
      tags: ['rooms'],
      scope: 'rooms:read',
      units: 1,
      kind: 'read',
    })
    .input(z.strictObject({ ...pageInput }))
    .output(checkedListOf(RoomView))
    .query(async ({ ctx, input }) => {
      const page = await listRooms(ctx.services.ds.manager, ctx.actor, input, ctx.services.secret);
      return { data: page.data.map(toRoom), nextCursor: page.nextCursor };
    }),

  create: apiProcedure
    .meta({
      http: { method: 'POST', path: '/v1/rooms', successStatus: 201 },
      tool: {
        name: 'create_room',
        title: 'Create a room',
        description: 'Creates a room in your organization (or personal scope) with you as a member.',
      },
      summary: 'Create a room',
      description:
        'Creates an ordinary room in the acting organization (or personal scope); the caller becomes a member. Fires room.created (preview, never delivered).',
      tags: ['rooms'],
      scope: 'rooms:write',
      units: 5,
      kind: 'write',
    })
    .input(z.strictObject({ name: roomName }))
    .output(RoomView)
    .mutation(async ({ ctx, input }) =>
      inWriteTransaction(ctx, async (m) => toRoom(await createRoomAs(m, ctx.services.now(), ctx.actor, input.name))),
    ),

  get: apiProcedure
    .meta({
      http: { method: 'GET', path: '/v1/rooms/{roomId}' },
      tool: { name: 'get_room', title: 'Get a room', description: 'One room by id.' },
      summary: 'Get a room',
      description: 'One room. Direct-message rooms answer 404 room_not_found.',
      tags: ['rooms'],
      scope: 'rooms:read',
      units: 1,
      kind: 'read',
      errors: ['not_found', 'room_not_found'],
    })
    .input(z.strictObject({ roomId: idOf('room') }))
    .output(RoomView)
    .query(async ({ ctx, input }) =>
      toRoom(await requireRoom(ctx.services.ds.manager, ctx.actor, input.roomId, 'read')),
    ),

  update: apiProcedure
    .meta({
      http: { method: 'PATCH', path: '/v1/rooms/{roomId}' },
      tool: {
        name: 'update_room',
        title: 'Update a room',
        description: 'Renames a room; only its creator or an organization owner/admin may.',
      },
      summary: 'Change room settings',
      description: 'Renames a room. Only its creator or an organization owner/admin may.',
      tags: ['rooms'],
      scope: 'rooms:write',
      units: 2,
      kind: 'write',
      idempotent: true,
      errors: ['not_found', 'room_not_found', 'forbidden'],
    })
    .input(z.strictObject({ roomId: idOf('room'), name: roomName.optional() }))
    .output(RoomView)
    .mutation(async ({ ctx, input }) =>
      inWriteTransaction(ctx, async (m) =>
        toRoom(await updateRoom(m, ctx.services.now(), ctx.actor, input.roomId, { name: input.name })),
      ),
    ),

  listMembers: apiProcedure
    .meta({
      http: { method: 'GET', path: '/v1/rooms/{roomId}/members' },
      tool: {
        name: 'list_room_members',
        title: 'List room members',
        description: 'Members of a room with their names, in the order they joined.',
      },
      summary: 'List room members',
      description: 'Members of a room, in the order they joined.',
      tags: ['rooms'],
      scope: 'rooms:read',
      units: 1,
      kind: 'read',
      errors: ['not_found', 'room_not_found'],
    })
    .input(z.strictObject({ roomId: idOf('room'), ...pageInput }))
    .output(checkedListOf(MemberView))
    .query(async ({ ctx, input }) => {
      const page = await listMembers(ctx.services.ds.manager, ctx.actor, input.roomId, input, ctx.services.secret);
      return { data: page.data.map(toMember), nextCursor: page.nextCursor };
    }),

  addMember: apiProcedure
    .meta({
      http: { method: 'POST', path: '/v1/rooms/{roomId}/members', successStatus: 201 },
      tool: {
        name: 'add_room_member',
        title: 'Add a room member',
        description: "Adds a user of the room's organization to the room (a repeat changes nothing).",
      },
      summary: 'Add a member to a room',
      description:
        "Adds a user of the room's organization (in a personal room: a user who shares an organization with the caller; anyone else answers 404 not_found, as an unknown user does). Fires room.member.added. Adding a member twice changes nothing.",
      tags: ['rooms'],
      scope: 'rooms:write',
      units: 2,
      kind: 'write',
      idempotent: true,
      errors: ['not_found', 'room_not_found', 'forbidden'],
    })
    .input(z.strictObject({ roomId: idOf('room'), userId: idOf('usr') }))
    .output(MemberView)
    .mutation(async ({ ctx, input }) => {
      return inWriteTransaction(ctx, async (m) => {
        const { member } = await addMember(m, ctx.services.now(), ctx.actor, input.roomId, input.userId);
        return toMember(member);
      });
    }),
});
