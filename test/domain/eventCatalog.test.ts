import { describe, expect, expectTypeOf, it } from 'vitest';
import type { Room } from '../../db/entities/index.js';
import type { Actor } from '../../src/domain/actor.js';
import {
  EVENT_CATALOG,
  type EventType,
  OBJECT_TYPES,
  type ObjectType,
  type ObjectTypeOf,
  STABLE_EVENT_TYPES,
  type StableEventType,
  V1_EVENT_TYPES,
  type V1EventType,
} from '../../src/domain/catalog.js';
import { emitEvent, type EmitEventOptions } from '../../src/domain/events.js';
import { V1_EVENT_TYPES as WEBHOOK_V1_EVENT_TYPES } from '../../src/webhooks/constants.js';
import { DELIVERED_EVENT_TYPES } from '../../src/webhooks/outbox.js';
import { catalogEntries } from '../../src/procedures/index.js';

// The event catalog is a type. One `as const` table; the event types, the v1 and stable subsets,
// the object types and their wire enum come from it, and emitEvent takes nothing else.

const room = {} as Room;
const actor = {} as Actor;
const now = new Date(0);

/** Never called: its body is checked by `npm run typecheck` (tsconfig covers test/). */
export function typeChecks(m: Parameters<typeof emitEvent>[0]) {
  void emitEvent(m, { type: 'record.created', room, object: { type: 'record', id: 'rec_1' }, actor, now });
  // @ts-expect-error a misspelled event type fails to compile instead of being written and never delivered
  void emitEvent(m, { type: 'record.creatd', room, object: { type: 'record', id: 'rec_1' }, actor, now });
  // @ts-expect-error an event carries the object type the catalog gives it
  void emitEvent(m, { type: 'message.created', room, object: { type: 'task', id: 'task_1' }, actor, now });
  const loose: EmitEventOptions = {
    // @ts-expect-error a string that is not known to be a catalog type is refused
    type: 'record.created' as string,
    room,
    object: { type: 'record', id: 'x' },
    actor,
    now,
  };
  return loose;
}

describe('event catalog', () => {
  it('derives the event types, the subsets and the object types from the one table', () => {
    expectTypeOf<'record.created'>().toExtend<EventType>();
    expectTypeOf<'room.created'>().not.toExtend<StableEventType>();
    expectTypeOf<'message.created'>().not.toExtend<V1EventType>();
    expectTypeOf<'task.updated'>().toExtend<V1EventType>();
    expectTypeOf<ObjectTypeOf<'approval.approved'>>().toEqualTypeOf<'record'>();
    expectTypeOf<ObjectTypeOf<'room.member.added'>>().toEqualTypeOf<'room'>();
    expectTypeOf<ObjectType>().toEqualTypeOf<'record' | 'message' | 'task' | 'file' | 'room'>();

    // the table is the operation modules' declared events (generated), each type once, the previews last
    // (without the `svc trigger` recipes, which the CLI reads from its own generated file)
    expect(EVENT_CATALOG).toEqual(catalogEntries().map(({ trigger: _, ...entry }) => entry));
    expect(new Set(EVENT_CATALOG.map((e) => e.type)).size).toBe(EVENT_CATALOG.length);
    expect([...STABLE_EVENT_TYPES]).toEqual(EVENT_CATALOG.filter((e) => e.stable).map((e) => e.type));
    expect(EVENT_CATALOG.findIndex((e) => !e.stable)).toBe(STABLE_EVENT_TYPES.size);
    expect(DELIVERED_EVENT_TYPES).toBe(STABLE_EVENT_TYPES);
    // the v1 enumeration the earlier implementation sent (docs/webhooks.md#what-a-receiver-gets), unchanged
    expect([...V1_EVENT_TYPES].sort()).toEqual([
      'approval.approved',
      'approval.rejected',
      'approval.requested',
      'approval.withdrawn',
      'record.created',
      'record.deleted',
      'record.updated',
      'room.member.added',
      'task.updated',
    ]);
    expect(WEBHOOK_V1_EVENT_TYPES).toBe(V1_EVENT_TYPES);
    // the wire enum's order, and every object type is the object of some event
    expect(OBJECT_TYPES).toEqual(['record', 'message', 'task', 'file', 'room']);
    expect(new Set(EVENT_CATALOG.map((e) => e.objectType))).toEqual(new Set(OBJECT_TYPES));
  });
});
