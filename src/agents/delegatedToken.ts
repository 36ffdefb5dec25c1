import type { EntityManager } from 'typeorm';
import { OAuthGrant, OAuthToken, type AgentRun } from '../../db/entities/index.js';
import { insertDelegatedToken } from '../../db/stores/agentRuns.js';
import { randomToken, sha256Hex } from '../domain/hashing.js';
import { newId } from '../domain/ids.js';
import { iso } from '../domain/time.js';
import { audienceOf } from '../http/surfaces.js';
import { ACCESS_TOKEN_PREFIX } from '../oauth/constants.js';

export interface DelegatedToken {
  accessToken: string;
  tokenId: string;
  expiresAt: string;
  scopes: string[];
  resource: string;
}

/**
 * Mints a run's delegated token: an `svc_at_` access token for the MCP audience whose grant is
 * the delegating human's in the run's organization (its client id is the connector's), with the run's
 * scopes (the invoker's ∩ the connector's), restricted to the run's room and stamped with the run, expiring
 * at the run's deadline. Only its SHA-256 is stored. It authenticates as actor=agent only while the run is
 * queued or running (`resolveDelegatedToken`), and is revoked when the run ends. No refresh token.
 */
export async function mintDelegatedToken(
  m: EntityManager,
  now: Date,
  baseUrl: string,
  run: AgentRun,
): Promise<DelegatedToken> {
  const resource = audienceOf(baseUrl, 'mcp');
  const t = iso(now);
  const grant = Object.assign(new OAuthGrant(), {
    id: newId('grt', now.getTime()),
    clientId: run.connectorId,
    userId: run.userId,
    organizationId: run.organizationId,
    scopes: run.scopes,
    resource,
    createdAt: t,
    expiresAt: run.deadlineAt,
    revokedAt: null,
  } satisfies OAuthGrant);
  const accessToken = randomToken(ACCESS_TOKEN_PREFIX, 32);
  const token = Object.assign(new OAuthToken(), {
    id: newId('tok', now.getTime()),
    grantId: grant.id,
    kind: 'access',
    tokenHash: sha256Hex(accessToken),
    scopes: run.scopes,
    createdAt: t,
    expiresAt: run.deadlineAt,
    usedAt: null,
    revokedAt: null,
    roomId: run.roomId,
    agentRunId: run.id,
  } satisfies OAuthToken);
  await insertDelegatedToken(m, grant, token);
  return { accessToken, tokenId: token.id, expiresAt: run.deadlineAt, scopes: run.scopes, resource };
}
