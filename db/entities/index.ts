import { AgentConnector } from './AgentConnector.js';
import { AgentRun } from './AgentRun.js';
import { ApiKey } from './ApiKey.js';
import { AuditEntry } from './AuditEntry.js';
import { EventRow } from './Event.js';
import { IdempotencyRecord } from './Idempotency.js';
import { Message } from './Message.js';
import { Membership, Organization } from './Organization.js';
import { OAuthClient } from './OAuthClient.js';
import { OAuthClientApproval } from './OAuthClientApproval.js';
import { OAuthCode } from './OAuthCode.js';
import { OAuthGrant } from './OAuthGrant.js';
import { OAuthToken } from './OAuthToken.js';
import { Approval, MeetingRecord } from './Record.js';
import { Room, RoomMember } from './Room.js';
import { Setting } from './Setting.js';
import { StoredFile } from './StoredFile.js';
import { Task } from './Task.js';
import { UnitUsage } from './UnitUsage.js';
import { User } from './User.js';
import { Webhook } from './Webhook.js';
import { WebhookAttempt } from './WebhookAttempt.js';
import { WebhookDelivery } from './WebhookDelivery.js';
import { WebSession } from './WebSession.js';

export type { OrgRole } from './Organization.js';
export type { TaskStatus } from './Task.js';
export type { ApprovalState, ApprovalStatus } from './Record.js';
export type { WebhookApiVersion } from './Webhook.js';
export type { WebhookDeliveryState } from './WebhookDelivery.js';
export type { WebhookAttemptKind } from './WebhookAttempt.js';
export type { AgentRunInput, AgentRunStatus } from './AgentRun.js';

export {
  ApiKey,
  Approval,
  AuditEntry,
  EventRow,
  IdempotencyRecord,
  MeetingRecord,
  Membership,
  Message,
  Organization,
  Room,
  RoomMember,
  Setting,
  StoredFile,
  Task,
  UnitUsage,
  User,
};
export { OAuthClient, OAuthClientApproval, OAuthCode, OAuthGrant, OAuthToken };
export { Webhook, WebhookAttempt, WebhookDelivery };
export { WebSession };
export { AgentConnector, AgentRun };

/** Every entity the data source knows. Later areas (OAuth, webhooks) append theirs here. */
export const entities = [
  ApiKey,
  Approval,
  AuditEntry,
  EventRow,
  IdempotencyRecord,
  MeetingRecord,
  Membership,
  Message,
  Organization,
  Room,
  RoomMember,
  Setting,
  StoredFile,
  Task,
  UnitUsage,
  User,
  OAuthClient,
  OAuthClientApproval,
  OAuthCode,
  OAuthGrant,
  OAuthToken,
  Webhook,
  WebhookDelivery,
  WebhookAttempt,
  WebSession,
  AgentConnector,
  AgentRun,
];
