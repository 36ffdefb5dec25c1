import type { Request, RequestHandler, Response, Router } from 'express';
import type { Services } from '../../domain/services.js';
import { connectorActions } from './connectorActions.js';
import { COPY_SCRIPT_PATH } from './copyScript.js';
import { developerPage } from './developerPage.js';
import { DEVELOPER_PAGES, DEVELOPER_PATH } from './developerNav.js';
import { keyActions } from './keyActions.js';
import { mcpClientActions } from './mcpClientActions.js';
import { webhookActions } from './webhookActions.js';

export interface DeveloperRoutesOptions {
  services: Services;
  /** The pages' form parser. */
  form: RequestHandler;
}

/**
 * Mounts `/settings/developer` (an overview), its pages (keys, webhooks and each webhook, MCP clients and
 * connectors, agent runs, activity) and their actions: every POST carries the session's CSRF token; the
 * confirmation steps of revoke, delete, rotate and remove are GET pages (they change nothing), and a POST
 * without `confirm=yes` answers with the same step, so each works without JavaScript.
 */
export function mountDeveloperPages(r: Router, { services, form }: DeveloperRoutesOptions): void {
  const page = developerPage({ services });
  const keys = keyActions({ services });
  const hooks = webhookActions({ services });
  const mcpClients = mcpClientActions({ services });
  const connectors = connectorActions({ services });
  const to = (path: string) => (_req: Request, res: Response) => res.redirect(303, path);
  r.get(DEVELOPER_PATH, page.overview);
  r.get(COPY_SCRIPT_PATH, page.copyScript);
  r.get(DEVELOPER_PAGES.keys.path, page.keys);
  r.post(`${DEVELOPER_PATH}/keys`, form, keys.create);
  r.get(`${DEVELOPER_PATH}/keys/revoke`, keys.confirm);
  r.post(`${DEVELOPER_PATH}/keys/revoke`, form, keys.revoke);
  r.get(DEVELOPER_PAGES.webhooks.path, page.webhooks);
  r.post(`${DEVELOPER_PATH}/webhooks`, form, hooks.create);
  r.post(`${DEVELOPER_PATH}/webhooks/activate`, form, hooks.activate);
  r.post(`${DEVELOPER_PATH}/webhooks/deactivate`, form, hooks.deactivate);
  r.get(`${DEVELOPER_PATH}/webhooks/rotate`, hooks.confirmRotate);
  r.post(`${DEVELOPER_PATH}/webhooks/rotate`, form, hooks.rotate);
  r.get(`${DEVELOPER_PATH}/webhooks/complete-rotation`, hooks.confirmCompleteRotation);
  r.post(`${DEVELOPER_PATH}/webhooks/complete-rotation`, form, hooks.completeRotation);
  r.get(`${DEVELOPER_PATH}/webhooks/delete`, hooks.confirmDelete);
  r.post(`${DEVELOPER_PATH}/webhooks/delete`, form, hooks.delete);
  r.post(`${DEVELOPER_PATH}/webhooks/redeliver`, form, hooks.redeliver);
  r.post(`${DEVELOPER_PATH}/webhooks/test`, form, hooks.test);
  r.post(`${DEVELOPER_PATH}/webhooks/update`, form, hooks.update);
  r.post(`${DEVELOPER_PATH}/webhooks/recover`, form, hooks.recover);
  r.get(`${DEVELOPER_PATH}/webhooks/delivery`, hooks.delivery);
  r.get(`${DEVELOPER_PATH}/webhooks/:webhookId`, page.webhook);
  r.get(DEVELOPER_PAGES.mcp.path, page.mcp);
  r.get(`${DEVELOPER_PATH}/mcp-clients`, to(`${DEVELOPER_PAGES.mcp.path}#mcp-clients`));
  r.post(`${DEVELOPER_PATH}/mcp-clients`, form, mcpClients.approve);
  r.get(`${DEVELOPER_PATH}/mcp-clients/remove`, mcpClients.confirmRemove);
  r.post(`${DEVELOPER_PATH}/mcp-clients/remove`, form, mcpClients.remove);
  r.get(`${DEVELOPER_PATH}/connectors`, to(`${DEVELOPER_PAGES.mcp.path}#agents`));
  r.post(`${DEVELOPER_PATH}/connectors`, form, connectors.create);
  r.post(`${DEVELOPER_PATH}/connectors/activate`, form, connectors.activate);
  r.post(`${DEVELOPER_PATH}/connectors/deactivate`, form, connectors.deactivate);
  r.get(DEVELOPER_PAGES.runs.path, page.runs);
  r.get(DEVELOPER_PAGES.activity.path, page.activity);
}
