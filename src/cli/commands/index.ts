import type { Command } from '../command.js';
import { auditCommands } from './audit.js';
import { clientCommands } from './clients.js';
import { connectorCommands } from './connectors.js';
import { directoryCommands } from './directory.js';
import { remoteCommands } from './remote.js';
import { webhookCommands } from './webhooks.js';

/** Every operator command. Each area (OAuth clients, webhooks, worker) adds its own file and one line here. */
export const commands: Command[] = [
  ...directoryCommands,
  ...auditCommands,
  ...clientCommands,
  ...webhookCommands,
  ...connectorCommands,
  ...remoteCommands,
];
