import { describe, expect, it } from 'vitest';
import { Membership } from '../../db/entities/index.js';
import { sql } from '../../db/sql.js';
import { listAudit, writeAudit } from '../../src/auth/audit.js';
import { chargeUnits } from '../../src/auth/units.js';
import { revokeApiKey } from '../../src/domain/apiKeys.js';
import { inTransaction } from '../../db/transaction.js';
import { call, createWorld, startTestServer } from '../helpers/harness.js';

// The per-request statements were made cheaper for the benchmark (bench/README.md); these hold the rules
// that must not move with them: no cached answer outlives a revocation, and a request's own bookkeeping
// never depends on another request's transaction.

describe('the request hot path keeps its rules', () => {
  it('a key that has just worked fails at once when revoked, or when its user leaves the organization', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    expect((await call(t, 'GET', '/v1/me', { key: w.key })).status).toBe(200);
    await inTransaction(t.rt.services, (m) => revokeApiKey(m, new Date(), w.keyId));
    const revoked = await call(t, 'GET', '/v1/me', { key: w.key });
    expect(revoked.status).toBe(401);
    expect(revoked.body.error.code).toBe('unauthorized');

    const w2 = await createWorld(t.rt, 'Other');
    expect((await call(t, 'GET', '/v1/me', { key: w2.key })).status).toBe(200);
    await inTransaction(t.rt.services, (m) => m.delete(Membership, { userId: w2.owner.id, organizationId: w2.orgId }));
    expect((await call(t, 'GET', '/v1/me', { key: w2.key })).status).toBe(401);
  });

  it('the user a credential acts for is read with it on every call: a change shows at once, a deleted user fails', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    expect((await call(t, 'GET', '/v1/me', { key: w.key })).body.name).toBe('owner');
    await sql(t.rt.services.ds, 'UPDATE "users" SET "name" = ?, "locale" = ? WHERE "id" = ?', [
      'Renamed',
      'fr',
      w.owner.id,
    ]);
    expect((await call(t, 'GET', '/v1/me', { key: w.key })).body).toMatchObject({
      id: w.owner.id,
      name: 'Renamed',
      locale: 'fr',
    });
    // a key whose user row is gone is no credential
    await sql(t.rt.services.ds, 'UPDATE "api_keys" SET "userId" = ? WHERE "id" = ?', ['usr_gone', w.keyId]);
    expect((await call(t, 'GET', '/v1/me', { key: w.key })).status).toBe(401);
  });

  it('an audit row and a unit charge made while another transaction is open survive its rollback', async () => {
    await using t = await startTestServer();
    const s = t.rt.services;
    let opened!: () => void;
    let fail!: () => void;
    const isOpen = new Promise<void>((r) => (opened = r));
    const failing = new Promise<void>((r) => (fail = r));
    const other = inTransaction(s, async (m) => {
      await sql(m, 'INSERT INTO "settings" ("key", "value") VALUES (?, ?)', ['rolled-back', 'x']);
      opened();
      await failing;
      throw new Error('the other request fails');
    });
    await isOpen;
    const row = {
      requestId: 'req_during_other_tx',
      surface: 'rest' as const,
      method: 'GET',
      routePattern: '/v1/me',
      statusCode: 200,
      authMethod: null,
      actor: null,
      delegatingUserId: null,
      scopes: [],
      organizationId: null,
      userId: null,
      apiKeyId: null,
      tokenId: null,
      units: 1,
      errorCode: null,
    };
    const mine = Promise.all([writeAudit(s, row), chargeUnits(s.ds, 'org:hot-path', new Date(), 3, 100)]);
    fail();
    await expect(other).rejects.toThrow('the other request fails');
    const [, charged] = await mine;
    expect(charged).toMatchObject({ allowed: true, used: 3 });

    expect((await sql(s.ds, 'SELECT "key" FROM "settings" WHERE "key" = ?', ['rolled-back'])).rows).toEqual([]);
    expect((await listAudit(s, {})).map((a) => a.requestId)).toContain('req_during_other_tx');
    expect((await chargeUnits(s.ds, 'org:hot-path', new Date(), 0, 100)).used).toBe(3);
  });
});
