/**
 * What an event's `data.object` can be, in the order the wire enum lists them (OpenAPI `EventObject`,
 * MCP `list_events`). Every entry is the object type of at least one catalog event (checked in catalog.ts).
 */
export const OBJECT_TYPES = ['record', 'message', 'task', 'file', 'room'] as const;
export type ObjectType = (typeof OBJECT_TYPES)[number];

/**
 * One event type of the catalog, as the operation module that fires it declares it (its `…Events` list in
 * src/procedures/); `npm run generate` assembles the lists into eventCatalog.generated.ts.
 */
export interface CatalogEntry {
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
  /** How `svc trigger` fires it through the public API, or why it cannot (a preview needs neither). */
  trigger?: TriggerRecipe;
}

/** One call of a trigger recipe. */
export interface TriggerCall {
  method: 'POST' | 'PATCH' | 'DELETE';
  /** Under `/v1/rooms/{room}`; `{name}` is an id an earlier call saved (`{room}`: the room's). */
  path: string;
  /** String values; `{now}` is the time of the call, `{user}` the `--user` given. */
  body?: Record<string, string>;
  /** The name the answer's `id` is saved under; the event's object is the id saved under its object type. */
  saves?: string;
}

/**
 * What `svc trigger <type>` sends, in order (src/cli/remote/trigger.ts reads the recipes `npm run generate` collects),
 * and, when it needs `--user`, what that user must be; or why the type cannot be triggered there.
 */
export type TriggerRecipe = { calls: readonly TriggerCall[]; needsUser?: string } | { cannot: string };
