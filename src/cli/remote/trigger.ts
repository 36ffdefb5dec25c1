import { UsageError } from '../command.js';
import { callApi, type RemoteTarget } from './apiClient.js';

type Step = (t: RemoteTarget, roomId: string, o: { userId?: string }) => Promise<{ type: string; id: string }>;

const room = (roomId: string) => `/v1/rooms/${encodeURIComponent(roomId)}`;
const stamp = () => new Date().toISOString();

const newRecord = async (t: RemoteTarget, roomId: string) =>
  (
    await callApi<{ id: string }>(t, 'POST', `${room(roomId)}/records`, {
      title: `svc trigger ${stamp()}`,
      body: 'Created by svc trigger to fire a webhook event.',
    })
  ).body.id;
const newTask = async (t: RemoteTarget, roomId: string) =>
  (await callApi<{ id: string }>(t, 'POST', `${room(roomId)}/tasks`, { title: `svc trigger ${stamp()}` })).body.id;
const approval = (t: RemoteTarget, roomId: string, recordId: string, action: string) =>
  callApi(t, 'POST', `${room(roomId)}/records/${recordId}/approval/${action}`, {});

const requested: Step = async (t, roomId) => {
  const id = await newRecord(t, roomId);
  await approval(t, roomId, id, 'request');
  return { type: 'record', id };
};

/**
 * `svc trigger <event-type>`: what each supported event type takes through the public API (the object
 * created, and the write that fires the event). Approve and reject need a second member (not the
 * requester), so they are not triggered here; file.uploaded needs an upload attached to a message or task.
 */
export const TRIGGERS: Record<string, Step> = {
  'message.created': async (t, roomId) => ({
    type: 'message',
    id: (await callApi<{ id: string }>(t, 'POST', `${room(roomId)}/messages`, { body: `svc trigger ${stamp()}` })).body
      .id,
  }),
  'task.created': async (t, roomId) => ({ type: 'task', id: await newTask(t, roomId) }),
  'task.updated': async (t, roomId) => {
    const id = await newTask(t, roomId);
    await callApi(t, 'PATCH', `${room(roomId)}/tasks/${id}`, { title: `svc trigger (updated) ${stamp()}` });
    return { type: 'task', id };
  },
  'record.created': async (t, roomId) => ({ type: 'record', id: await newRecord(t, roomId) }),
  'record.updated': async (t, roomId) => {
    const id = await newRecord(t, roomId);
    await callApi(t, 'PATCH', `${room(roomId)}/records/${id}`, { title: `svc trigger (updated) ${stamp()}` });
    return { type: 'record', id };
  },
  'record.deleted': async (t, roomId) => {
    const id = await newRecord(t, roomId);
    await callApi(t, 'DELETE', `${room(roomId)}/records/${id}`);
    return { type: 'record', id };
  },
  'approval.requested': requested,
  'record.approval_requested': requested,
  'approval.withdrawn': async (t, roomId) => {
    const r = await requested(t, roomId, {});
    await approval(t, roomId, r.id, 'withdraw');
    return r;
  },
  'room.member.added': async (t, roomId, o) => {
    if (!o.userId)
      throw new UsageError(
        "room.member.added needs --user USR (a user of the room's organization who is not a member yet)",
      );
    await callApi(t, 'POST', `${room(roomId)}/members`, { userId: o.userId });
    return { type: 'room', id: roomId };
  },
};

const NOT_HERE: Record<string, string> = {
  'approval.approved':
    "approving needs a room member other than the requester; request with this key and approve with another user's key",
  'record.approved':
    "approving needs a room member other than the requester; request with this key and approve with another user's key",
  'approval.rejected':
    "rejecting needs a room member other than the requester; request with this key and reject with another user's key",
  'file.uploaded': 'it needs an upload attached to a message or task (POST /v1/rooms/{roomId}/files)',
  'room.created': 'it is a preview event and is never delivered',
};

/** Fires `eventType` in `roomId` by creating its object through the API; returns what was created. */
export async function trigger(
  t: RemoteTarget,
  eventType: string | undefined,
  roomId: string,
  o: { userId?: string } = {},
) {
  const supported = Object.keys(TRIGGERS).join(', ');
  if (!eventType)
    throw new UsageError(`name the event type: svc trigger <event-type> --room ROOM (one of ${supported})`);
  const step = TRIGGERS[eventType];
  if (!step) {
    const why = NOT_HERE[eventType];
    throw new UsageError(
      why
        ? `${eventType} cannot be triggered here: ${why}`
        : `unknown event type ${JSON.stringify(eventType.slice(0, 100))}; supported: ${supported}`,
    );
  }
  const object = await step(t, roomId, o);
  return { eventType, roomId, object };
}
