import { describe, expect, it } from 'vitest';
import { authenticate } from '../../src/auth/authenticate.js';
import type { AuthenticatedActor } from '../../src/domain/actor.js';
import type { Services } from '../../src/domain/services.js';

// How OAuth access tokens authenticate hangs on the runtime's services, not on a module:
// two runtimes in one process (tests, the CLI beside a server) never share it.

const actorOf = (userId: string): AuthenticatedActor => ({
  kind: 'user',
  userId,
  organizationId: null,
  billingEntity: `user:${userId}`,
  scopes: ['rooms:read'],
  credential: { method: 'oauth_bearer', id: `tok_${userId}` },
  plan: 'default',
  audience: 'http://x/v1',
  user: { email: `${userId}@example.com`, name: userId, locale: 'en', createdAt: '2026-01-01T00:00:00.000Z' },
});

/** Services that know only the one access token `token`, for the user `userId`. */
const runtimeKnowing = (token: string, userId: string) =>
  ({
    resolveAccessToken: async (_s: Services, t: string) => (t === token ? actorOf(userId) : null),
  }) as unknown as Services;

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('the access-token resolver of each runtime', () => {
  it("authenticates with its own runtime's resolver only", async () => {
    const a = runtimeKnowing('svc_at_aaaa', 'usr_a');
    const b = runtimeKnowing('svc_at_bbbb', 'usr_b');
    expect((await authenticate(a, bearer('svc_at_aaaa'))).userId).toBe('usr_a');
    expect((await authenticate(b, bearer('svc_at_bbbb'))).userId).toBe('usr_b');
    // a token of the other runtime is no credential here, whichever runtime was set up last
    await expect(authenticate(a, bearer('svc_at_bbbb'))).rejects.toMatchObject({ code: 'unauthorized' });
    await expect(authenticate(b, bearer('svc_at_aaaa'))).rejects.toMatchObject({ code: 'unauthorized' });
  });

  it('a runtime without one refuses access tokens although another in the process has one', async () => {
    const withResolver = runtimeKnowing('svc_at_cccc', 'usr_c');
    expect((await authenticate(withResolver, bearer('svc_at_cccc'))).userId).toBe('usr_c');
    await expect(authenticate({} as Services, bearer('svc_at_cccc'))).rejects.toMatchObject({
      code: 'unauthorized',
      status: 401,
    });
  });
});
