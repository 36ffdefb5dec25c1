import type { EntityManager } from 'typeorm';
import { clientsByIds, grantOfUser, liveGrantsOfUser, organizationsByIds } from '../../db/stores/oauth.js';
import { notFound } from '../domain/errors.js';
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
