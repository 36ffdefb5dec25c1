import type { Request, Response } from 'express';
import { DomainError } from '../domain/errors.js';
import { SCOPE_DESCRIPTIONS, type Scope } from '../domain/scopes.js';
import type { Services } from '../domain/services.js';
import { listUserGrants, revokeUserGrant } from '../oauth/userGrants.js';
import { inTransaction } from '../../db/transaction.js';
import { checkCsrf, csrfToken } from './csrf.js';
import { html } from './html.js';
import { page, sendErrorPage, sendPage } from './layout.js';
import { currentUser } from './session.js';

const loginFirst = (res: Response) => res.redirect(303, `/login?next=${encodeURIComponent('/settings/apps')}`);

/**
 * `/settings/apps`: the apps and agents the signed-in user granted, each with what it may
 * do, where and in which context, and a `Revoke` button that revokes the grant and every token under it.
 */
export function appsPage({ services: s }: { services: Services }) {
  return {
    async show(req: Request, res: Response) {
      const who = await currentUser(s, req);
      if (!who) return loginFirst(res);
      const csrf = csrfToken(s, req, res, who.session);
      const grants = await listUserGrants(s.ds.manager, s.now(), who.user.id);
      const audience = (r: string) => (r.endsWith('/mcp') ? 'MCP tools (/mcp)' : 'REST API (/v1)');
      const rows = grants.map(
        (g) => html`<tr>
<td><strong>${g.clientName}</strong><br><span class="muted">${g.kind === 'agent' ? 'AI agent acting for you' : 'App'}</span></td>
<td>${audience(g.resource)}<br><span class="muted">${g.organization ? `as ${g.organization.name}` : 'personal'}</span></td>
<td><ul>${g.scopes.map((sc) => html`<li title="${SCOPE_DESCRIPTIONS[sc as Scope] ?? ''}">${sc}</li>`)}</ul></td>
<td>${g.createdAt.slice(0, 10)}</td>
<td><form method="post" action="/settings/apps/revoke"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="grant" value="${g.grantId}"><button type="submit" aria-label="Revoke ${g.clientName}">Revoke</button></form></td>
</tr>`,
      );
      sendPage(
        res,
        200,
        page({
          title: 'Apps and agents',
          signedIn: { email: who.user.email, csrf },
          body: grants.length
            ? html`<p>These apps and agents can act for you. Revoking one ends its access at once.</p>
<table><thead><tr><th>App</th><th>Access</th><th>Scopes</th><th>Granted</th><th></th></tr></thead><tbody>${rows}</tbody></table>`
            : html`<p>You have not granted any app or agent access.</p>`,
        }),
      );
    },

    async revoke(req: Request, res: Response) {
      const who = await currentUser(s, req);
      if (!who) return loginFirst(res);
      const body = (req.body ?? {}) as Record<string, unknown>;
      if (!checkCsrf(s, req, who.session, body.csrf)) {
        return sendErrorPage(
          res,
          403,
          'Apps and agents',
          'This form expired or did not come from this site. Go back, reload the page and try again.',
        );
      }
      // a NUL names no grant (and PostgreSQL text refuses it): treated as unknown
      const grantId = typeof body.grant === 'string' && !body.grant.includes('\0') ? body.grant : '';
      try {
        await inTransaction(s, (m) => revokeUserGrant(m, s.now(), who.user.id, grantId));
      } catch (err) {
        if (err instanceof DomainError && err.code === 'not_found')
          return sendErrorPage(res, 404, 'Apps and agents', 'No such grant.');
        throw err;
      }
      res.redirect(303, '/settings/apps');
    },
  };
}
