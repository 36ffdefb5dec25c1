import { DEVELOPER_PAGES, webhookPath, type DeveloperPageName } from './developerNav.js';

/** The confirmations an action's redirect may ask the page to show: fixed texts, never echoed input. */
const NOTICES = {
  'key-revoked': 'The key was revoked. Requests with it are refused from now on.',
  'webhook-activated': 'The webhook is active again: new events are delivered to it.',
  'webhook-deactivated': 'The webhook is inactive: events are no longer delivered to it.',
  'webhook-deleted': 'The webhook was deleted with its delivery history.',
  'rotation-completed':
    'Rotation completed: the next secret is now the only one; the old secret no longer signs deliveries.',
  redelivered: 'Redelivered: the receiver accepted the event. See the new row in the delivery history.',
  'connector-activated': 'The agent connector is active: runs can use it again.',
  'connector-deactivated': 'The agent connector is inactive: new runs through it are refused.',
  'redelivery-failed': 'Redelivered, but the receiver did not accept it. See the new row in the delivery history.',
  'mcp-client-approved': 'The MCP client is approved: members of the organization can now connect it.',
  'mcp-client-removed':
    'The approval was removed: the client can no longer start sign-in or refresh its tokens through it.',
} as const;

export type Notice = keyof typeof NOTICES;

export function noticeText(code: unknown): string | undefined {
  return typeof code === 'string' && Object.hasOwn(NOTICES, code) ? NOTICES[code as Notice] : undefined;
}

/** Where an action sends the browser afterwards: one of the pages with a notice, scrolled to `anchor`. */
export const afterAction = (notice: Notice, to: DeveloperPageName, anchor: string): string =>
  `${DEVELOPER_PAGES[to].path}?notice=${notice}#${anchor}`;

/** After an action on one webhook: its own page with a notice. */
export const afterWebhookAction = (notice: Notice, webhookId: string): string =>
  `${webhookPath(webhookId)}?notice=${notice}`;
