import type { EntityManager } from 'typeorm';
import type { OAuthClientApproval } from '../../db/entities/index.js';
import {
  approvalById,
  approvalOf,
  approvalsOfOrganization as approvalsOfOrganizationRows,
  approvalsOfPatterns,
  deleteApproval,
  deleteApprovalById,
  insertApproval,
  organizationExists,
} from '../../db/stores/oauth.js';
import { inTransaction } from '../../db/transaction.js';
import { notFound, validationError } from '../domain/errors.js';
import type { Services } from '../domain/services.js';
import { newId } from '../domain/ids.js';
import { iso } from '../domain/time.js';

/**
 * Why `raw` can't be a client-id URL of a Client ID Metadata Document, or null when it can: https, a path
 * other than `/`, no fragment, no user info, no dot segments (draft-ietf-oauth-client-id-metadata-document §3).
 */
export function clientIdUrlProblem(raw: string): string | null {
  if (raw.length > 2000) return 'is longer than 2000 characters';
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'is not an absolute URL';
  }
  if (u.protocol !== 'https:') return 'must use https';
  if (u.username || u.password) return 'must not carry user info';
  if (u.hash || raw.includes('#')) return 'must not have a fragment';
  if (u.pathname === '/' || u.pathname === '') return 'must have a path (the metadata document), not only an origin';
  if (/\/\.\.?(\/|$)/.test(raw.replace(/[?#].*$/, ''))) return 'must not contain . or .. path segments';
  if (u.href !== raw) return `must be written in its normal form (${u.href})`;
  return null;
}

/** A client-id URL (exact) or an https origin (every client-id URL under it), normalized; throws a validation error. */
export function normalizeApprovalPattern(raw: string): string {
  const value = raw.trim();
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw validationError(
      'Give an https client-id URL (https://app.example/oauth/client.json) or an https origin (https://app.example)',
      { field: 'url' },
    );
  }
  if (u.protocol !== 'https:') throw validationError('The client-id URL or origin must use https', { field: 'url' });
  if ((u.pathname === '/' || u.pathname === '') && !u.search && !u.hash && !u.username && !u.password) return u.origin;
  const problem = clientIdUrlProblem(value);
  if (problem) throw validationError(`The client-id URL ${problem}`, { field: 'url' });
  return value;
}

/** The patterns that approve `clientUrl`: the URL itself and its origin. */
const patternsFor = (clientUrl: string) => [clientUrl, new URL(clientUrl).origin];

/** The approvals that cover a client-id URL (server-wide ones have organizationId null). */
export async function approvalsFor(m: EntityManager, clientUrl: string): Promise<OAuthClientApproval[]> {
  return approvalsOfPatterns(m, patternsFor(clientUrl));
}

/** Where a client-id URL may act: everywhere (server-wide), or in the listed organizations (none: not approved). */
export type ApprovedContexts = { all: true } | { all: false; organizationIds: string[] };

/**
 * The organizations a client-id URL may act in: `all` when an operator approved it server-wide, else the
 * organizations whose administrators approved it (empty: not approved at all).
 */
export async function approvedContexts(m: EntityManager, clientUrl: string): Promise<ApprovedContexts> {
  const rows = await approvalsFor(m, clientUrl);
  if (rows.some((r) => r.organizationId === null)) return { all: true };
  return { all: false, organizationIds: [...new Set(rows.map((r) => r.organizationId!))] };
}

/**
 * Whether approvals let a metadata-document client act in one context: an organization when it or the
 * operator (server-wide) approved the client, Personal only when the operator did (as the consent step
 * offers them). Checked at consent, at the code exchange and at every refresh, for the grant's own context.
 */
export function approvesContext(contexts: ApprovedContexts, organizationId: string | null): boolean {
  if (contexts.all) return true;
  return organizationId !== null && contexts.organizationIds.includes(organizationId);
}

/** Approves a client-id URL or origin for one organization (or server-wide with null); idempotent. */
export async function approveClient(
  m: EntityManager,
  now: Date,
  o: { pattern: string; organizationId: string | null; createdById: string | null },
): Promise<{ approval: OAuthClientApproval; created: boolean }> {
  const pattern = normalizeApprovalPattern(o.pattern);
  const existing = await approvalOf(m, pattern, o.organizationId);
  if (existing) return { approval: existing, created: false };
  const approval = await insertApproval(m, {
    id: newId('cla', now.getTime()),
    pattern,
    organizationId: o.organizationId,
    createdById: o.createdById,
    createdAt: iso(now),
  });
  return { approval, created: true };
}

/** Withdraws an approval of a pattern for one organization (or the server-wide one); true when one was removed. */
export async function withdrawApproval(
  m: EntityManager,
  o: { pattern: string; organizationId: string | null },
): Promise<boolean> {
  const pattern = normalizeApprovalPattern(o.pattern);
  return (await deleteApproval(m, pattern, o.organizationId)) > 0;
}

/** An organization's approvals (the settings page), oldest first. */
export async function approvalsOfOrganization(
  m: EntityManager,
  organizationId: string,
): Promise<OAuthClientApproval[]> {
  return approvalsOfOrganizationRows(m, organizationId);
}

/** `approveClient` in a transaction of its own (the settings page's form). */
export const approveClientNow = (
  s: Services,
  o: { pattern: string; organizationId: string | null; createdById: string | null },
): Promise<{ approval: OAuthClientApproval; created: boolean }> =>
  inTransaction(s, (m) => approveClient(m, s.now(), o));

/**
 * The operator's `svc client allow`: approves a pattern server-wide (null) or for an organization, which must
 * exist (404 otherwise), in a transaction of its own.
 */
export const allowClient = (s: Services, o: { pattern: string; organizationId: string | null }) =>
  inTransaction(s, async (m) => {
    if (o.organizationId && !(await organizationExists(m, o.organizationId))) throw notFound('Organization');
    return approveClient(m, s.now(), { ...o, createdById: null });
  });

/** `withdrawApproval` in a transaction of its own (the operator's `svc client disallow`). */
export const disallowClient = (s: Services, o: { pattern: string; organizationId: string | null }): Promise<boolean> =>
  inTransaction(s, (m) => withdrawApproval(m, o));

/** One approval by its id (the settings page's withdraw button), or null. */
export const findApproval = (m: EntityManager, id: string): Promise<OAuthClientApproval | null> => approvalById(m, id);

/** Withdraws one approval by its id, in a transaction of its own (the settings page's `Remove`). */
export const withdrawApprovalById = (s: Services, id: string): Promise<void> =>
  inTransaction(s, (m) => deleteApprovalById(m, id));

export type { OAuthClientApproval };
