/** The event catalog of spec 6.1: 14 stable types fire; `room.created` is a preview and never delivered. */
export const EVENT_CATALOG = [
  { type: 'record.created', description: 'A record was created', stable: true },
  { type: 'record.updated', description: 'A record was updated', stable: true },
  { type: 'record.deleted', description: 'A record was deleted', stable: true },
  { type: 'approval.requested', description: 'Approval of a record was requested', stable: true },
  { type: 'approval.approved', description: 'A record was approved', stable: true },
  { type: 'approval.rejected', description: 'A record was rejected', stable: true },
  { type: 'approval.withdrawn', description: 'An approval request was withdrawn', stable: true },
  { type: 'record.approval_requested', description: 'v2 alias of approval.requested; data.object is the record', stable: true },
  { type: 'record.approved', description: 'v2 alias of approval.approved; data.object is the record', stable: true },
  { type: 'room.member.added', description: 'A member was added to a room', stable: true },
  { type: 'message.created', description: 'A message was posted', stable: true },
  { type: 'task.created', description: 'A task was created', stable: true },
  { type: 'task.updated', description: 'A task was updated (including a period change)', stable: true },
  { type: 'file.uploaded', description: 'A file attached to a message or task was finalized', stable: true },
  { type: 'room.created', description: 'A room was created (preview: never delivered, a new room has no subscriber)', stable: false },
] as const;
