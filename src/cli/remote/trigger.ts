import type { TriggerCall } from '../../domain/catalogEntry.js';
import { UsageError } from '../command.js';
import { callApi, type RemoteTarget } from './apiClient.js';
import { TRIGGER_RECIPES } from './triggers.generated.js';

/** The event types `svc trigger` can fire: those whose catalog entry gives calls. */
export const TRIGGERABLE = Object.keys(TRIGGER_RECIPES).filter((type) => 'calls' in TRIGGER_RECIPES[type]);

/** `{name}` in `text` replaced by its value in `vars` (URI-encoded in a path). */
const fill = (text: string, vars: Record<string, string>, encode: (s: string) => string) =>
  text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? encode(vars[name]) : whole));

/**
 * `svc trigger <event-type>`: fires `eventType` in `roomId` by the calls its operation module declares (its catalog
 * entry's `trigger`), through the public API; returns what the event is about (the id saved under its object type).
 */
export async function trigger(
  t: RemoteTarget,
  eventType: string | undefined,
  roomId: string,
  o: { userId?: string } = {},
) {
  const supported = TRIGGERABLE.join(', ');
  if (!eventType)
    throw new UsageError(`name the event type: svc trigger <event-type> --room ROOM (one of ${supported})`);
  const recipe = Object.hasOwn(TRIGGER_RECIPES, eventType) ? TRIGGER_RECIPES[eventType] : undefined;
  if (!recipe || 'cannot' in recipe) {
    const why =
      recipe?.cannot ?? (eventType === 'room.created' ? 'it is a preview event and is never delivered' : null);
    throw new UsageError(
      why
        ? `${eventType} cannot be triggered here: ${why}`
        : `unknown event type ${JSON.stringify(eventType.slice(0, 100))}; supported: ${supported}`,
    );
  }
  if (recipe.needsUser && !o.userId) throw new UsageError(`${eventType} needs --user USR (${recipe.needsUser})`);
  const vars: Record<string, string> = { room: roomId, ...(o.userId ? { user: o.userId } : {}) };
  for (const call of recipe.calls as readonly TriggerCall[]) {
    const now = { ...vars, now: new Date().toISOString() };
    const body = call.body && Object.fromEntries(Object.entries(call.body).map(([k, v]) => [k, fill(v, now, String)]));
    const path = `/v1/rooms/{room}/${call.path}`;
    const answer = await callApi<{ id?: string }>(t, call.method, fill(path, vars, encodeURIComponent), body);
    if (call.saves && typeof answer.body?.id === 'string') vars[call.saves] = answer.body.id;
  }
  return { eventType, roomId, object: { type: recipe.objectType, id: vars[recipe.objectType] } };
}
