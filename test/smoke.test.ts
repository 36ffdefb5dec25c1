import { describe, expect, it } from 'vitest';
import { call, createWorld, startTestServer } from './helpers/harness.js';

describe('smoke', () => {
  it('serves /healthz and /v1/me with an API key', async () => {
    await using t = await startTestServer();
    expect(await (await t.fetch('/healthz')).json()).toEqual({ status: 'ok' });
    const w = await createWorld(t.rt);
    const r = await call(t, 'GET', '/v1/me', { key: w.key });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: w.owner.id, organizationId: w.orgId, billingContext: 'organization' });
  });
});
