import type { EntityManager } from 'typeorm';
import { inTransaction } from '../../db/transaction.js';
import {
  clientsByIds,
  grantOfUser,
  grantsByIds,
  liveGrantsOfUser,
  organizationsByIds,
  tokensByIds,
} from '../../db/stores/oauth.js';
import { notFound } from '../domain/errors.js';
import type { Services } from '../domain/services.js';
import { iso } from '../domain/time.js';
import { revokeGrant } from './tokenStore.js';

export interface GrantSummary {
  grantId: string;
  clientName: string;
  kind: 'app' | 'agent';
  resource: string;
  organization: { id: string; name: string } | null;
  scopes: string[];
  createdAt: string;
}

/** The apps and agents a user has granted and that still hold a live refresh family. */
export async function listUserGrants(m: EntityManager, now: Date, userId: string): Promise<GrantSummary[]> {
  const grants = await liveGrantsOfUser(m, userId, iso(now));
  if (!grants.length) return [];
  const clients = new Map(
    (
      await clientsByIds(
        m,
        grants.map((g) => g.clientId),
      )
    ).map((c) => [c.id, c]),
  );
  const orgIds = [...new Set(grants.map((g) => g.organizationId).filter((x): x is string => !!x))];
  const orgs = new Map((await organizationsByIds(m, orgIds)).map((o) => [o.id, o]));
  return grants.map((g) => ({
    grantId: g.id,
    clientName: clients.get(g.clientId)?.name ?? '(deleted client)',
    kind: clients.get(g.clientId)?.kind ?? 'app',
    resource: g.resource,
    organization: g.organizationId
      ? { id: g.organizationId, name: orgs.get(g.organizationId)?.name ?? g.organizationId }
      : null,
    scopes: g.scopes,
    createdAt: g.createdAt,
  }));
}

/** Revokes one of the user's own grants and all its tokens; another user's grant answers 404. */
export async function revokeUserGrant(m: EntityManager, now: Date, userId: string, grantId: string): Promise<void> {
  const grant = await grantOfUser(m, grantId, userId);
  if (!grant) throw notFound('Grant');
  await revokeGrant(m, now, grant.id);
}

/** `revokeUserGrant` in a transaction of its own (the settings page's `Revoke`). */
export const revokeOwnGrant = (s: Services, userId: string, grantId: string): Promise<void> =>
  inTransaction(s, (m) => revokeUserGrant(m, s.now(), userId, grantId));

/** The name of the client each of `tokenIds` was issued to, for the tokens whose grant and client still exist. */
export async function clientNamesOfTokens(m: EntityManager, tokenIds: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (!tokenIds.length) return out;
  const tokens = await tokensByIds(m, tokenIds);
  const grants = await grantsByIds(
    m,
    tokens.map((t) => t.grantId),
  );
  const clients = await clientsByIds(
    m,
    grants.map((g) => g.clientId),
  );
  const clientName = new Map(clients.map((c) => [c.id, c.name]));
  const grantClient = new Map(grants.map((g) => [g.id, clientName.get(g.clientId)]));
  for (const t of tokens) {
    const name = grantClient.get(t.grantId);
    if (name) out.set(t.id, name);
  }
  return out;
}
