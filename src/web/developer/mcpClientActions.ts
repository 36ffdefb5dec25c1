import type { Request, Response } from 'express';
import { DomainError } from '../../domain/errors.js';
import type { Services } from '../../domain/services.js';
import {
  approveClientNow,
  findApproval,
  withdrawApprovalById,
  type OAuthClientApproval,
} from '../../oauth/clientApprovals.js';
import { organizationsOf, type SignedIn } from './developerAccess.js';
import { renderDeveloperPage, signedIn, signedInForm } from './developerPage.js';
import { csrfToken } from '../csrf.js';
import { html } from '../html.js';
import { sendPage } from '../layout.js';
import { confirmView } from './confirmView.js';
import { DEVELOPER_PAGES } from './developerNav.js';
import { text } from './formFields.js';
import { afterAction } from './notices.js';

/** The organizations the user may approve MCP clients for: those they own or administer. */
export async function administeredOrgs(s: Services, userId: string) {
  return (await organizationsOf(s.ds.manager, userId)).filter((o) => o.role === 'owner' || o.role === 'admin');
}

/**
 * The "Approved MCP clients" actions of /settings/developer: an organization owner or
 * admin approves a client-id URL or origin for their organization, or removes an approval. Anyone else
 * is refused (403), and an approval of another organization is not found (404).
 */
export function mcpClientActions({ services: s }: { services: Services }) {
  const refuse = (
    req: Request,
    res: Response,
    who: SignedIn,
    text: string,
    status: number,
    form?: { url: string; org: string },
  ) => renderDeveloperPage(s, req, res, who, { mcpClients: { message: { kind: 'error', text }, form } }, status);

  /** An approval of an organization the user administers, or null. */
  async function approvalOf(who: SignedIn, id: string): Promise<OAuthClientApproval | null> {
    const orgs = await administeredOrgs(s, who.user.id);
    const approval = id && !id.includes('\0') ? await findApproval(s.ds.manager, id) : null;
    if (!approval || !approval.organizationId || !orgs.some((o) => o.id === approval.organizationId)) return null;
    return approval;
  }

  function confirmRemove(req: Request, res: Response, who: SignedIn, approval: OAuthClientApproval) {
    sendPage(
      res,
      200,
      confirmView({
        title: 'Remove MCP client approval?',
        question: html`<p>Remove the approval of <code>${approval.pattern}</code>? Clients published there can no longer start sign-in or refresh their tokens for your organization.</p>`,
        action: '/settings/developer/mcp-clients/remove',
        fields: { approval: approval.id },
        button: 'Remove',
        cancel: `${DEVELOPER_PAGES.mcp.path}#mcp-clients`,
        csrf: csrfToken(s, req, res, who.session),
        email: who.user.email,
      }),
    );
  }

  return {
    async approve(req: Request, res: Response) {
      const g = await signedInForm(s, req, res);
      if (!g) return;
      const { who, body } = g;
      const form = { url: text(body, 'url').trim(), org: text(body, 'org') };
      const orgs = await administeredOrgs(s, who.user.id);
      if (!orgs.some((o) => o.id === form.org)) {
        return refuse(
          req,
          res,
          who,
          'Only an owner or admin of the organization can approve MCP clients for it.',
          403,
          form,
        );
      }
      try {
        const { approval } = await approveClientNow(s, {
          pattern: form.url,
          organizationId: form.org,
          createdById: who.user.id,
        });
        s.log.info(
          { userId: who.user.id, organizationId: form.org, pattern: approval.pattern },
          'MCP client approved in developer settings',
        );
      } catch (err) {
        if (err instanceof DomainError && err.status < 500)
          return refuse(req, res, who, `${err.message}.`.replace(/\.\.$/, '.'), 400, form);
        throw err;
      }
      res.redirect(303, afterAction('mcp-client-approved', 'mcp', 'mcp-clients'));
    },

    /** GET: the confirmation step of `Remove`. */
    async confirmRemove(req: Request, res: Response) {
      const who = await signedIn(s, req, res);
      if (!who) return;
      const id = typeof req.query.approval === 'string' ? req.query.approval : '';
      const approval = await approvalOf(who, id);
      if (!approval) return refuse(req, res, who, 'No such approval among the organizations you administer.', 404);
      confirmRemove(req, res, who, approval);
    },

    async remove(req: Request, res: Response) {
      const g = await signedInForm(s, req, res);
      if (!g) return;
      const { who, body } = g;
      const approval = await approvalOf(who, text(body, 'approval'));
      if (!approval) {
        return refuse(req, res, who, 'No such approval among the organizations you administer.', 404);
      }
      if (text(body, 'confirm') !== 'yes') return confirmRemove(req, res, who, approval);
      await withdrawApprovalById(s, approval.id);
      s.log.info(
        { userId: who.user.id, organizationId: approval.organizationId, pattern: approval.pattern },
        'MCP client approval removed in developer settings',
      );
      res.redirect(303, afterAction('mcp-client-removed', 'mcp', 'mcp-clients'));
    },
  };
}
