import type { OAuthClient } from '../../db/entities/index.js';
import { clientById, insertClient, updateClient } from '../../db/stores/oauth.js';
import { sha256Hex } from '../domain/hashing.js';
import { SCOPES } from '../domain/scopes.js';
import type { Services } from '../domain/services.js';
import { iso } from '../domain/time.js';
import { inTransaction } from '../../db/transaction.js';
import { approvedContexts, clientIdUrlProblem } from './clientApprovals.js';
import { ClientMetadataError, loadClientMetadata } from './clientMetadataDocument.js';

/** A `client_id` that names a Client ID Metadata Document (an https URL) rather than a registered client. */
export const isClientIdUrl = (id: string): boolean => /^https:\/\//i.test(id);

const ROW_PREFIX = 'cimd_';

/**
 * The stored row of a metadata-document client: its id is derived from the URL (ids are 64 characters at
 * most), it holds the last validated document (name, redirect URIs), and it is public and `agent`. The row
 * id is internal: it is never accepted as a `client_id` (see `clientIdentity`).
 */
export const metadataClientRowId = (url: string): string => `${ROW_PREFIX}${sha256Hex(url).slice(0, 48)}`;

/** Whether a stored client is a metadata-document client's row. */
export const isMetadataClientRow = (id: string): boolean => id.startsWith(ROW_PREFIX);

/**
 * The one identity of a `client_id` as presented: a registered client's id, or a client-id URL in its normal
 * form (then `rowId` is its stored row). Null for every other spelling: a metadata-document client is known
 * by its URL only, since its approvals are granted to the URL; its row id, or the URL respelled (case, port,
 * encoding, fragment, dot segments), would reach the row without the URL's approval rules.
 */
export function clientIdentity(id: string): { rowId: string; url: string | null } | null {
  if (id.includes('\0')) return null;
  if (isClientIdUrl(id)) return clientIdUrlProblem(id) ? null : { rowId: metadataClientRowId(id), url: id };
  if (isMetadataClientRow(id.toLowerCase())) return null;
  return { rowId: id, url: null };
}

/** Why a `client_id` that is a metadata-document client's row id is refused (the error page says it). */
export const ROW_ID_REFUSED =
  'A client that publishes a client metadata document is identified by its client-id URL (https://…), never by another id.';

/**
 * The stored client for a `client_id` as presented (a registered id, or the row of a client-id URL in normal form);
 * null for any other spelling.
 */
export async function findClientById(s: Services, id: string): Promise<OAuthClient | null> {
  const identity = clientIdentity(id);
  return identity ? clientById(s.ds, identity.rowId) : null;
}

/** Where an organization administrator approves a client, for the error page. */
export const approvalHint = (url: string) =>
  `An owner or admin of your organization must approve it once, under Settings → Developer → "Approved MCP clients" ` +
  `(the URL ${url} or its origin ${new URL(url).origin}), or an operator with: svc client allow --url ${url}`;

/**
 * Resolves a client-id URL at /oauth/authorize: the URL must be well formed and approved
 * (checked before anything is fetched, so only approved URLs are ever fetched), then its document is
 * loaded and validated and the client's row is brought up to date with it. Never redirects: the caller
 * shows `message` on an error page.
 */
export async function resolveMetadataClient(
  s: Services,
  url: string,
): Promise<{ client: OAuthClient } | { message: string }> {
  const problem = clientIdUrlProblem(url);
  if (problem) return { message: `The client_id ${url} ${problem}.` };
  const contexts = await approvedContexts(s.ds.manager, url);
  if (!contexts.all && !contexts.organizationIds.length) {
    return { message: `The client ${url} is not approved on this server. ${approvalHint(url)}.` };
  }
  let doc;
  try {
    doc = await loadClientMetadata(s, url);
  } catch (err) {
    if (err instanceof ClientMetadataError) return { message: err.message };
    throw err;
  }
  const id = metadataClientRowId(url);
  const upsert = () =>
    inTransaction(s, async (m) => {
      const existing = await clientById(m, id);
      const fields = { name: doc.clientName, redirectUris: doc.redirectUris, scopes: [...SCOPES] };
      if (existing) {
        const changed =
          existing.name !== fields.name ||
          JSON.stringify(existing.redirectUris) !== JSON.stringify(fields.redirectUris) ||
          JSON.stringify(existing.scopes) !== JSON.stringify(fields.scopes);
        if (changed) await updateClient(m, id, fields);
        return { ...existing, ...fields };
      }
      return insertClient(m, {
        id,
        ...fields,
        type: 'public',
        kind: 'agent',
        secretHash: null,
        createdAt: iso(s.now()),
      });
    });
  try {
    return { client: await upsert() };
  } catch (err) {
    // two first authorizations at once: one inserted the row, the other now updates it
    if (!(await clientById(s.ds, id))) throw err;
    return { client: await upsert() };
  }
}
