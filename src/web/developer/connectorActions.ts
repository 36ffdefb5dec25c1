import type { Request, Response } from 'express';
import { createConnector, setConnectorActive } from '../../agents/connectors.js';
import { DomainError } from '../../domain/errors.js';
import type { Services } from '../../domain/services.js';
import type { ConnectorFormValues } from './agentsSection.js';
import { renderDeveloperPage, signedInForm } from './developerPage.js';
import { list, text } from './formFields.js';
import { afterAction } from './notices.js';

/** How a refused connector action reads on the page; anything else (a 5xx) goes to the page error handler. */
function refusal(err: unknown): { status: number; text: string } | null {
  if (!(err instanceof DomainError) || err.status >= 500) return null;
  if (err.code === 'forbidden')
    return { status: 403, text: 'Only owners and admins of the organization manage its agent connectors.' };
  if (err.code === 'validation_error' && err.details?.field === 'url')
    return { status: 400, text: `This URL cannot be a connector: ${err.message}.` };
  return { status: err.status, text: err.message.endsWith('.') ? err.message : `${err.message}.` };
}

/**
 * The connector actions of /settings/developer: create (the signing secret is shown once in the
 * response), activate, deactivate. Each is the signed-in user's, checked to be an owner/admin of the
 * connector's organization; every POST carries the session's CSRF token.
 */
export function connectorActions({ services: s }: { services: Services }) {
  async function create(req: Request, res: Response) {
    const g = await signedInForm(s, req, res);
    if (!g) return;
    const form: ConnectorFormValues = {
      org: text(g.body, 'org'),
      name: text(g.body, 'name'),
      url: text(g.body, 'url'),
      scopes: list(g.body, 'scopes'),
    };
    try {
      const { connector, secret } = await createConnector(s, {
        organizationId: form.org,
        name: form.name,
        url: form.url,
        scopes: form.scopes,
        createdById: g.who.user.id,
      });
      await renderDeveloperPage(s, req, res, g.who, {
        agents: { once: { title: `Connector ${connector.name} created. Its signing secret:`, secret } },
      });
    } catch (err) {
      const r = refusal(err);
      if (!r) throw err;
      await renderDeveloperPage(
        s,
        req,
        res,
        g.who,
        { agents: { form, message: { kind: 'error', text: r.text } } },
        r.status,
      );
    }
  }

  const toggle = (active: boolean) => async (req: Request, res: Response) => {
    const g = await signedInForm(s, req, res);
    if (!g) return;
    try {
      await setConnectorActive(s, text(g.body, 'connector'), active, g.who.user.id);
      res.redirect(303, afterAction(active ? 'connector-activated' : 'connector-deactivated', 'mcp', 'agents'));
    } catch (err) {
      const r = refusal(err);
      if (!r) throw err;
      await renderDeveloperPage(s, req, res, g.who, { agents: { message: { kind: 'error', text: r.text } } }, r.status);
    }
  };

  return { create, activate: toggle(true), deactivate: toggle(false) };
}
