import type { Request } from 'express';
import type { OAuthClient } from '../../db/entities/index.js';
import { clientById } from '../../db/stores/oauth.js';
import { safeEqual, sha256Hex } from '../domain/hashing.js';
import type { Services } from '../domain/services.js';
import { type ApprovedContexts, approvedContexts, approvesContext } from './clientApprovals.js';
import type { FormParams } from './formParams.js';
import { clientIdentity } from './metadataClients.js';
import { OAuthError } from './OAuthError.js';
import { basicChallenge } from '../http/challenge.js';
import { WWW_AUTHENTICATE } from '../http/headers.js';

/**
 * The client of a token or revocation request; a metadata-document client's carries its client-id URL and the
 * approvals of it read at authentication (null for a registered client).
 */
export type AuthenticatedClient = OAuthClient & {
  readonly metadata: { url: string; approvals: ApprovedContexts } | null;
};

const formDecode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));

/** `Authorization: Basic` credentials, form-decoded as RFC 6749 §2.3.1 requires; null when absent. */
function basicCredentials(req: Request): { id: string; secret: string } | null {
  const h = req.headers.authorization;
  if (h === undefined) return null;
  const m = /^Basic +([A-Za-z0-9+/=]+)\s*$/i.exec(h);
  if (!m)
    throw new OAuthError('invalid_client', 'Unsupported or malformed Authorization header', {
      [WWW_AUTHENTICATE]: basicChallenge('svc'),
    });
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  try {
    if (colon < 1) throw new Error('no colon');
    const credentials = { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
    if (credentials.id.includes('\0') || credentials.secret.includes('\0')) throw new Error('NUL');
    return credentials;
  } catch {
    throw new OAuthError('invalid_client', 'Malformed HTTP Basic credentials', {
      [WWW_AUTHENTICATE]: basicChallenge('svc'),
    });
  }
}

/**
 * Authenticates the client of a token or revocation request: confidential clients with
 * `client_secret_basic` or `client_secret_post` (one method only), public clients by `client_id` alone (a
 * client-id URL of a metadata document client too, while it stays approved).
 * Failures are 401 `invalid_client`, with `WWW-Authenticate: Basic` when Basic was tried. Secrets are
 * compared as SHA-256 in constant time.
 */
export async function authenticateClient(s: Services, req: Request, p: FormParams): Promise<AuthenticatedClient> {
  const basic = basicCredentials(req);
  const bodyId = p.one('client_id');
  const bodySecret = p.one('client_secret');
  if (basic && bodySecret !== undefined)
    throw new OAuthError('invalid_request', 'Use one client authentication method, not several');
  if (basic && bodyId !== undefined && bodyId !== basic.id)
    throw new OAuthError('invalid_request', 'client_id does not match the Authorization header');
  const challenge = basic ? { [WWW_AUTHENTICATE]: basicChallenge('svc') } : undefined;
  const failed = () => new OAuthError('invalid_client', 'Client authentication failed', challenge);

  const id = basic?.id ?? bodyId;
  if (!id) throw new OAuthError('invalid_client', 'Client authentication is required', challenge);
  // one identity per client: a metadata-document client by its client-id URL in normal form only
  const identity = clientIdentity(id);
  const client = identity ? await clientById(s.ds, identity.rowId) : null;
  if (!identity || !client) throw failed();
  // a client-id URL works only while an approval of it stands (the grants check their own context too)
  let metadata: AuthenticatedClient['metadata'] = null;
  if (identity.url !== null) {
    metadata = { url: identity.url, approvals: await approvedContexts(s.ds.manager, identity.url) };
    const { approvals } = metadata;
    if (!approvals.all && !approvals.organizationIds.length)
      throw new OAuthError('invalid_client', 'The client is no longer approved on this server');
  }
  const secret = basic?.secret ?? bodySecret;
  if (client.type === 'public') {
    if (secret !== undefined && secret !== '')
      throw new OAuthError('invalid_client', 'A public client does not authenticate with a secret', challenge);
    return { ...client, metadata };
  }
  if (secret === undefined || secret === '')
    throw new OAuthError('invalid_client', 'Client authentication is required', challenge);
  if (!client.secretHash || !safeEqual(sha256Hex(secret), client.secretHash)) throw failed();
  return { ...client, metadata };
}

/**
 * Refuses a code exchange or a refresh of a metadata-document client whose approvals no longer cover the
 * grant's acting context (its organization, or Personal): withdrawing one organization's approval stops that
 * organization's grants whatever other organizations approve. Registered clients need no approval.
 */
export function requireApprovedContext(client: AuthenticatedClient, organizationId: string | null): void {
  if (!client.metadata || approvesContext(client.metadata.approvals, organizationId)) return;
  throw new OAuthError(
    'invalid_grant',
    organizationId === null
      ? 'The client is not approved server-wide any more, which a grant in the personal context needs'
      : "The client is not approved for the grant's organization any more",
  );
}
