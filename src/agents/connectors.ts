import type { EntityManager } from 'typeorm';
import { AgentConnector } from '../../db/entities/index.js';
import {
  connectorsOfOrganization,
  connectorsPage,
  findConnector,
  insertConnector,
  setConnectorActiveRow,
} from '../../db/stores/connectors.js';
import { orgRole } from '../domain/access.js';
import type { Actor } from '../domain/actor.js';
import { DomainError, notFound, validationError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { type PageInput, readPage } from '../domain/paging.js';
import { NEVER_DELEGATED, SCOPES, type Scope } from '../domain/scopes.js';
import type { Services } from '../domain/services.js';
import { iso } from '../domain/time.js';
import { inTransaction } from '../../db/transaction.js';
import { deliveryDepsFor } from '../webhooks/deliveryDeps.js';
import { encryptSecret, newWebhookSecret } from '../webhooks/secretBox.js';
import { assertWebhookUrlAllowed } from '../webhooks/webhookConfig.js';

const MAX_NAME = 100;

export interface CreateConnectorInput {
  organizationId: string;
  name: string;
  url: string;
  scopes: string[];
  /**
   * The administrator registering it (checked to be an owner/admin of the organization); absent for the operator's CLI.
   */
  createdById?: string | null;
}

/** Who may register and manage connectors: the organization's owners and admins (`svc connector` is the operator). */
export async function requireConnectorAdmin(m: EntityManager, userId: string, organizationId: string): Promise<void> {
  const role = await orgRole(m, userId, organizationId);
  if (!role) throw notFound('Organization');
  if (role !== 'owner' && role !== 'admin')
    throw new DomainError('forbidden', 'Only organization owners and admins manage agent connectors');
}

/**
 * Registers an agent connector. The endpoint passes the webhooks' SSRF guard (no internal
 * address in any spelling, `SVC_SSRF_ALLOWLIST` aside) and is checked again at every invocation. The signing
 * secret (`whsec_…`, the webhooks' signing scheme) is returned here once and kept only encrypted.
 */
export async function createConnector(
  s: Services,
  input: CreateConnectorInput,
): Promise<{ connector: AgentConnector; secret: string }> {
  const name = input.name.trim();
  if (!name || name.length > MAX_NAME)
    throw validationError(`Name must be 1-${MAX_NAME} characters`, { field: 'name' });
  const scopes = [...new Set(input.scopes.map((x) => x.trim()).filter(Boolean))];
  const unknown = scopes.filter((x) => !SCOPES.includes(x as Scope));
  if (unknown.length) throw validationError(`Unknown scopes: ${unknown.join(', ')}`, { field: 'scopes' });
  const refused = scopes.filter((x) => NEVER_DELEGATED.has(x));
  if (refused.length)
    throw validationError(`A connector cannot be delegated ${refused.join(', ')}`, { field: 'scopes' });
  if (!scopes.length) throw validationError('Choose at least one scope', { field: 'scopes' });
  if (input.createdById) await requireConnectorAdmin(s.ds.manager, input.createdById, input.organizationId);
  await assertWebhookUrlAllowed(s, input.url);
  const secret = newWebhookSecret();
  const key = deliveryDepsFor(s).key;
  const connector = await inTransaction(s, async (m) => {
    const now = iso(s.now());
    const row = Object.assign(new AgentConnector(), {
      id: newId('acn', s.now().getTime()),
      organizationId: input.organizationId,
      name,
      url: input.url,
      scopes,
      secretEnc: encryptSecret(key, secret),
      active: true,
      createdById: input.createdById ?? null,
      createdAt: now,
      updatedAt: now,
    } satisfies AgentConnector);
    await insertConnector(m, row);
    return row;
  });
  return { connector, secret };
}

/** The organization's connectors, oldest first. */
export async function listConnectors(m: EntityManager, organizationId: string): Promise<AgentConnector[]> {
  return connectorsOfOrganization(m, organizationId);
}

/**
 * A page of the connectors a member of the actor's organization can run agents through, oldest first; none in the
 * individual context (connectors belong to organizations).
 */
export async function listOrganizationConnectors(m: EntityManager, actor: Actor, page: PageInput, secret: string) {
  return readPage<AgentConnector>(
    page,
    secret,
    (r) => r.id,
    (b) => connectorsPage(m, actor.organizationId, b),
  );
}

/** Activates or deactivates a connector; `actorUserId` (the page) must be an owner/admin of its organization. */
export async function setConnectorActive(
  s: Services,
  id: string,
  active: boolean,
  actorUserId?: string,
): Promise<void> {
  await inTransaction(s, async (m) => {
    const c = await findConnector(m, id);
    if (!c) throw notFound('Connector');
    if (actorUserId) await requireConnectorAdmin(m, actorUserId, c.organizationId);
    await setConnectorActiveRow(m, id, active, iso(s.now()));
  });
}

export type { AgentConnector, AgentRun } from '../../db/entities/index.js';
