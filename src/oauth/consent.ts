import { inTransaction } from '../../db/transaction.js';
import { organizationsOf } from '../domain/memberships.js';
import type { Services } from '../domain/services.js';
import { type AuthorizationRequest, redirectTo } from './authorizationRequest.js';
import { approvedContexts, approvesContext } from './clientApprovals.js';
import { issueCode } from './codeStore.js';
import { approvalHint } from './metadataClients.js';

/**
 * The consent step's rules, for the consent page that web/ renders: which acting
 * contexts the user may pick, the answer to a denial, and the single-use code of an approval. The request
 * itself is checked by `verifyAuthorizationRequest` (authorizationRequest.ts).
 */

/** The acting contexts offered: the user's organizations (the first is the default), and whether Personal is. */
export interface ConsentContexts {
  orgs: { id: string; name: string }[];
  personal: boolean;
}

/**
 * The acting contexts the user may pick for this request: every organization and Personal for a registered
 * client or one an operator approved server-wide; for a metadata-document client otherwise only the user's
 * organizations whose administrators approved it.
 */
export async function consentContexts(
  s: Services,
  userId: string,
  request: AuthorizationRequest,
): Promise<ConsentContexts> {
  const orgs = (await organizationsOf(s.ds.manager, userId)).map(({ id, name }) => ({ id, name }));
  if (!request.clientUrl) return { orgs, personal: true };
  // the rule the code exchange and every refresh apply again to the grant's context (approvesContext)
  const approved = await approvedContexts(s.ds.manager, request.clientUrl);
  return { orgs: orgs.filter((o) => approvesContext(approved, o.id)), personal: approvesContext(approved, null) };
}

/** Why a metadata-document client offers no context to this user, and what to do about it. */
export const notApprovedHere = (url: string) =>
  `The client ${url} is not approved for any organization you belong to. ${approvalHint(url)}.`;

/**
 * The acting context of an answer: the organization chosen (the first offered when none was), null for
 * Personal, undefined when the choice is not one of those offered.
 */
export function chosenContext(contexts: ConsentContexts, chosen: unknown): string | null | undefined {
  const choice = chosen ?? contexts.orgs[0]?.id ?? 'personal';
  if (choice === 'personal') return contexts.personal ? null : undefined;
  return contexts.orgs.find((o) => o.id === choice)?.id;
}

/** Where a denial sends the user: the client's redirect_uri with `access_denied`, `state` and `iss`. */
export const denialRedirect = (s: Services, request: AuthorizationRequest): string =>
  redirectTo(s, request.redirectUri, {
    error: 'access_denied',
    error_description: 'The user denied the request',
    state: request.state,
  });

/**
 * Issues the single-use code of an approval, bound to the client, redirect_uri, PKCE challenge, resource,
 * user, scopes and acting context, and returns where it sends the user: the client's redirect_uri with
 * `code`, `state` and `iss`.
 */
export async function approvalRedirect(
  s: Services,
  a: { clientId: string; userId: string; organizationId: string | null; request: AuthorizationRequest },
): Promise<string> {
  const { request } = a;
  const code = await inTransaction(s, (m) =>
    issueCode(m, s.now(), {
      clientId: a.clientId,
      userId: a.userId,
      organizationId: a.organizationId,
      scopes: request.scopes,
      resource: request.resource,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge,
    }),
  );
  return redirectTo(s, request.redirectUri, { code, state: request.state });
}
