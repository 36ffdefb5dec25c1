import type { Request, Response } from 'express';
import { DomainError } from '../domain/errors.js';
import { SCOPE_DESCRIPTIONS, type Scope } from '../domain/scopes.js';
import type { Services } from '../domain/services.js';
import { listUserGrants, revokeOwnGrant } from '../oauth/userGrants.js';
import { checkCsrf, csrfToken } from './csrf.js';
import { html } from './html.js';
import { page, sendErrorPage, sendPage } from './layout.js';
import { currentUser, type Session } from './session.js';
import type { User } from '../domain/webSessions.js';
import { confirmView } from './developer/confirmView.js';
import { when } from './developer/viewParts.js';

const SESSIONS = html`<h2>Sessions</h2><p>Signed in on another computer or phone? <a href="/logout">Sign out on every device</a>.</p>`;

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
<td>${when(g.createdAt)}</td>
<td><form method="get" action="/settings/apps/revoke"><input type="hidden" name="grant" value="${g.grantId}"><button type="submit" aria-label="Revoke ${g.clientName}">Revoke</button></form></td>
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
<div class="scroll" role="region" aria-label="Apps and agents" tabindex="0"><table><thead><tr><th scope="col">App</th><th scope="col">Access</th><th scope="col">Scopes</th><th scope="col">Granted</th><th scope="col"><span class="sr-only">Action</span></th></tr></thead><tbody>${rows}</tbody></table></div>${SESSIONS}`
            : html`<p>You have not granted any app or agent access.</p>${SESSIONS}`,
        }),
      );
    },

    /** GET: the confirmation step of `Revoke`. */
    async confirm(req: Request, res: Response) {
      const who = await currentUser(s, req);
      if (!who) return loginFirst(res);
      await confirmRevoke(req, res, who, typeof req.query.grant === 'string' ? req.query.grant : '');
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
      if (body.confirm !== 'yes') return confirmRevoke(req, res, who, grantId);
      try {
        await revokeOwnGrant(s, who.user.id, grantId);
      } catch (err) {
        if (err instanceof DomainError && err.code === 'not_found')
          return sendErrorPage(res, 404, 'Apps and agents', 'No such grant.');
        throw err;
      }
      res.redirect(303, '/settings/apps');
    },
  };

  /** Asks before revoking one of the user's grants; another user's or an unknown grant is 404. */
  async function confirmRevoke(req: Request, res: Response, who: { session: Session; user: User }, grantId: string) {
    const grant = grantId.includes('\0')
      ? undefined
      : (await listUserGrants(s.ds.manager, s.now(), who.user.id)).find((g) => g.grantId === grantId);
    if (!grant) return sendErrorPage(res, 404, 'Apps and agents', 'No such grant.');
    const csrf = csrfToken(s, req, res, who.session);
    sendPage(
      res,
      200,
      confirmView({
        title: `Revoke ${grant.clientName}?`,
        question: html`<p><strong>${grant.clientName}</strong> loses its access at once: every token it holds stops working. It can only act for you again after you allow it anew.</p>`,
        action: '/settings/apps/revoke',
        fields: { grant: grant.grantId },
        button: 'Revoke',
        cancel: '/settings/apps',
        csrf,
        email: who.user.email,
      }),
    );
  }
}
