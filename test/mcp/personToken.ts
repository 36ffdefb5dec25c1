import { inTransaction } from '../../db/transaction.js';
import { audienceOf } from '../../src/http/surfaces.js';
import { createClient } from '../../src/oauth/clientRegistry.js';
import { createGrant, issueTokens } from '../../src/oauth/tokenStore.js';
import type { TestServer, World } from '../helpers/harness.js';

/** A person's OAuth access token for /mcp (what a desktop client holds after consent), with its token id. */
export async function personToken(
  t: TestServer,
  w: World,
  scopes: string[],
  userId = w.owner.id,
): Promise<{ token: string; tokenId: string }> {
  const s = t.rt.services;
  return inTransaction(s, async (m) => {
    const { client } = await createClient(m, s.now(), {
      name: 'Desk',
      redirectUris: ['http://127.0.0.1:7777/cb'],
      type: 'public',
    });
    const grant = await createGrant(m, s.now(), {
      clientId: client.id,
      userId,
      organizationId: w.orgId,
      scopes,
      resource: audienceOf(s.config.baseUrl, 'mcp'),
    });
    const issued = await issueTokens(m, s.now(), grant);
    return { token: issued.accessToken, tokenId: issued.accessTokenId };
  });
}
