import type { ServerCapabilities } from '@modelcontextprotocol/server';
import { APPS_EXTENSION } from '../apps/catalog.js';
import { TASKS_EXTENSION } from '../tasks/tasks.js';

/**
 * What the server declares (`initialize`, `server/discover`, and the server card of discovery.ts, so the three
 * cannot differ): resource subscriptions on 2026-07-28 (`subscriptions/listen`), the tasks extension and MCP Apps.
 */
export const serverCapabilities = (subscriptions: boolean): ServerCapabilities => ({
  tools: { listChanged: false },
  resources: subscriptions ? { listChanged: true, subscribe: true } : { listChanged: false },
  completions: {},
  extensions: { [TASKS_EXTENSION]: {}, [APPS_EXTENSION]: {} },
});
