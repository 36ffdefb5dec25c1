import type { RequestHandler, Router } from 'express';
import type { Services } from '../../domain/services.js';
import { connectorActions } from './connectorActions.js';
import { COPY_SCRIPT_PATH } from './copyScript.js';
import { DEVELOPER_PATH, developerPage } from './developerPage.js';
import { keyActions } from './keyActions.js';
import { mcpClientActions } from './mcpClientActions.js';
import { webhookActions } from './webhookActions.js';

export interface DeveloperRoutesOptions {
  services: Services;
  /** The pages' form parser. */
  form: RequestHandler;
}

/**
 * Mounts `/settings/developer` and its actions: every POST carries the session's CSRF token;
 * the confirmation steps of revoke and delete are GET pages (they change nothing).
 */
export function mountDeveloperPages(r: Router, { services, form }: DeveloperRoutesOptions): void {
  const page = developerPage({ services });
  const keys = keyActions({ services });
  const hooks = webhookActions({ services });
  const mcpClients = mcpClientActions({ services });
  r.get(DEVELOPER_PATH, page.show);
  r.get(COPY_SCRIPT_PATH, page.copyScript);
  r.post(`${DEVELOPER_PATH}/keys`, form, keys.create);
  r.get(`${DEVELOPER_PATH}/keys/revoke`, keys.confirm);
  r.post(`${DEVELOPER_PATH}/keys/revoke`, form, keys.revoke);
  r.post(`${DEVELOPER_PATH}/webhooks`, form, hooks.create);
  r.post(`${DEVELOPER_PATH}/webhooks/activate`, form, hooks.activate);
  r.post(`${DEVELOPER_PATH}/webhooks/deactivate`, form, hooks.deactivate);
  r.post(`${DEVELOPER_PATH}/webhooks/rotate`, form, hooks.rotate);
  r.post(`${DEVELOPER_PATH}/webhooks/complete-rotation`, form, hooks.completeRotation);
  r.get(`${DEVELOPER_PATH}/webhooks/delete`, hooks.confirmDelete);
  r.post(`${DEVELOPER_PATH}/webhooks/delete`, form, hooks.delete);
  r.post(`${DEVELOPER_PATH}/webhooks/redeliver`, form, hooks.redeliver);
  r.post(`${DEVELOPER_PATH}/webhooks/test`, form, hooks.test);
  r.post(`${DEVELOPER_PATH}/webhooks/update`, form, hooks.update);
  r.post(`${DEVELOPER_PATH}/webhooks/recover`, form, hooks.recover);
  r.get(`${DEVELOPER_PATH}/webhooks/delivery`, hooks.delivery);
  r.post(`${DEVELOPER_PATH}/mcp-clients`, form, mcpClients.approve);
  r.post(`${DEVELOPER_PATH}/mcp-clients/remove`, form, mcpClients.remove);
  const connectors = connectorActions({ services });
  r.post(`${DEVELOPER_PATH}/connectors`, form, connectors.create);
  r.post(`${DEVELOPER_PATH}/connectors/activate`, form, connectors.activate);
  r.post(`${DEVELOPER_PATH}/connectors/deactivate`, form, connectors.deactivate);
}
