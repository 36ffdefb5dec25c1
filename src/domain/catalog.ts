/**
 * What an event's `data.object` can be, in the order the wire enum lists them (OpenAPI `EventObject`,
 * MCP `list_events`). Every entry is the object type of at least one catalog event (checked below).
 */
export const OBJECT_TYPES = ['record', 'message', 'task', 'file', 'room'] as const;
export type ObjectType = (typeof OBJECT_TYPES)[number];

interface CatalogEntry {
  type: string;
  /** What `data.object` of this event is. */
  objectType: ObjectType;
  description: string;
  /** false: a preview type, listed but never delivered. */
  stable: boolean;
  /**
   * In the v1 enumeration (docs/webhooks.md#what-a-receiver-gets): a v1 webhook gets the legacy headers for it until
   * the sunset.
   */
  v1: boolean;
}

/**
 * The event catalog, the one table every event type comes from: 14 stable types fire;
 * `room.created` is a preview and never delivered. The order is the order of `GET /v1/event-types`.
 */
export const EVENT_CATALOG = [
  { type: 'record.created', objectType: 'record', description: 'A record was created', stable: true, v1: true },
  { type: 'record.updated', objectType: 'record', description: 'A record was updated', stable: true, v1: true },
  { type: 'record.deleted', objectType: 'record', description: 'A record was deleted', stable: true, v1: true },
  {
    type: 'approval.requested',
    objectType: 'record',
    description: 'Approval of a record was requested',
    stable: true,
    v1: true,
  },
  { type: 'approval.approved', objectType: 'record', description: 'A record was approved', stable: true, v1: true },
  { type: 'approval.rejected', objectType: 'record', description: 'A record was rejected', stable: true, v1: true },
  {
    type: 'approval.withdrawn',
    objectType: 'record',
    description: 'An approval request was withdrawn',
    stable: true,
    v1: true,
  },
  {
    type: 'record.approval_requested',
    objectType: 'record',
    description: 'v2 alias of approval.requested; data.object is the record',
    stable: true,
    v1: false,
  },
  {
    type: 'record.approved',
    objectType: 'record',
    description: 'v2 alias of approval.approved; data.object is the record',
    stable: true,
    v1: false,
  },
  {
    type: 'room.member.added',
    objectType: 'room',
    description: 'A member was added to a room',
    stable: true,
    v1: true,
  },
  { type: 'message.created', objectType: 'message', description: 'A message was posted', stable: true, v1: false },
  { type: 'task.created', objectType: 'task', description: 'A task was created', stable: true, v1: false },
  {
    type: 'task.updated',
    objectType: 'task',
    description: 'A task was updated (including a period change)',
    stable: true,
    v1: true,
  },
  {
    type: 'file.uploaded',
    objectType: 'file',
    description: 'A file attached to a message or task was finalized',
    stable: true,
    v1: false,
  },
  {
    type: 'room.created',
    objectType: 'room',
    description: 'A room was created (preview: never delivered, a new room has no subscriber)',
    stable: false,
    v1: false,
  },
] as const satisfies readonly CatalogEntry[];

type CatalogRow = (typeof EVENT_CATALOG)[number];
/** Every event type of the catalog: `emitEvent` accepts nothing else, so a misspelled type fails to compile. */
export type EventType = CatalogRow['type'];
/** The stable types: the ones delivered to webhooks. */
export type StableEventType = Extract<CatalogRow, { stable: true }>['type'];
/** The v1 enumeration: the events the earlier implementation sent. */
export type V1EventType = Extract<CatalogRow, { v1: true }>['type'];
/** The object type an event of type `T` carries. */
export type ObjectTypeOf<T extends EventType> = Extract<CatalogRow, { type: T }>['objectType'];

// every object type of the wire enum is used by the catalog (a type listed but never emitted fails here)
type UnusedObjectType = Exclude<ObjectType, CatalogRow['objectType']>;
const everyObjectTypeUsed: [UnusedObjectType] extends [never] ? true : UnusedObjectType = true;
void everyObjectTypeUsed;

// sets of strings: they are asked about stored types (an event row's, a delivery's), which are strings
const typesWhere = (keep: (e: CatalogRow) => boolean): ReadonlySet<string> =>
  new Set(EVENT_CATALOG.filter(keep).map((e) => e.type));

/** The stable types (`StableEventType`): delivered to webhooks. */
export const STABLE_EVENT_TYPES = typesWhere((e) => e.stable);
/** The v1 enumeration (`V1EventType`). */
export const V1_EVENT_TYPES = typesWhere((e) => e.v1);

/** Narrows a stored string (an event row's type) to a catalog type. */
export const isEventType = (t: string): t is EventType => EVENT_CATALOG.some((e) => e.type === t);
