import { Initial1764000000000 } from './1764000000000-Initial.js';
import { RateLimits1764000000500 } from './1764000000500-RateLimits.js';
import { OAuth1764000001000 } from './1764000001000-OAuth.js';
import { Webhooks1764000002000 } from './1764000002000-Webhooks.js';
import { ApiKeyLastUsed1764000003000 } from './1764000003000-ApiKeyLastUsed.js';
import { AuditUserIndex1764000004000 } from './1764000004000-AuditUserIndex.js';
import { WebSessions1764000005000 } from './1764000005000-WebSessions.js';
import { WebhookAttempts1764000006000 } from './1764000006000-WebhookAttempts.js';
import { OAuthClientApprovals1764000007000 } from './1764000007000-OAuthClientApprovals.js';
import { AgentRuns1764000008000 } from './1764000008000-AgentRuns.js';
import { OrderedListIndexes1764000009000 } from './1764000009000-OrderedListIndexes.js';
import { WebhookFiltersThrottle1764000010700 } from './1764000010700-WebhookFiltersThrottle.js';
import { McpStreamLeases1764000011000 } from './1764000011000-McpStreamLeases.js';
import { McpStreamLeaseOwners1764000011500 } from './1764000011500-McpStreamLeaseOwners.js';

/** Every migration, in order. Later areas append theirs. */
export const migrations = [
  Initial1764000000000,
  RateLimits1764000000500,
  OAuth1764000001000,
  Webhooks1764000002000,
  ApiKeyLastUsed1764000003000,
  AuditUserIndex1764000004000,
  WebSessions1764000005000,
  WebhookAttempts1764000006000,
  OAuthClientApprovals1764000007000,
  AgentRuns1764000008000,
  OrderedListIndexes1764000009000,
  WebhookFiltersThrottle1764000010700,
  McpStreamLeases1764000011000,
  McpStreamLeaseOwners1764000011500,
];
