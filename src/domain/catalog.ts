import { EVENT_CATALOG } from './eventCatalog.generated.js';
import type { ObjectType } from './catalogEntry.js';

export { type CatalogEntry, OBJECT_TYPES, type ObjectType } from './catalogEntry.js';
/**
 * The event catalog, the one table every event type comes from, assembled by `npm run generate` from the events
 * each operation module declares (src/procedures/index.ts `catalogEntries`): the stable types fire, a preview
 * (`stable: false`) is listed and never delivered. The order is the order of `GET /v1/event-types`.
 */
export { EVENT_CATALOG };

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
