import { describe, expect, it } from 'vitest';
import { requireRoom } from '../../src/domain/access.js';
import type { Actor } from '../../src/domain/actor.js';
import { actOnApproval } from '../../src/domain/approvals.js';
import { DomainError } from '../../src/domain/errors.js';
import { createRecord, updateRecord } from '../../src/domain/records.js';
import { createWorld, startTestServer } from '../helpers/harness.js';

const actorFor = (userId: string, organizationId: string | null): Actor => ({
  kind: 'user',
  userId,
  organizationId,
  billingEntity: organizationId ? `org:${organizationId}` : `user:${userId}`,
  scopes: [],
  credential: { method: 'api_key', id: 'key_x' },
  plan: 'default',
});

const codeOf = async (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: DomainError) => `${e.status} ${e.code}`,
  );

describe('domain RBAC (one place: requireRoom)', () => {
  it('applies scope, room type, membership and role', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const m = t.rt.services.ds.manager;
    const owner = actorFor(w.owner.id, w.orgId);
    const member = actorFor(w.member.id, w.orgId);
    expect(await codeOf(requireRoom(m, owner, w.roomId, 'manage'))).toBe('ok');
    expect(await codeOf(requireRoom(m, member, w.roomId, 'write'))).toBe('ok');
    expect(await codeOf(requireRoom(m, member, w.roomId, 'manage'))).toBe('403 forbidden');
    expect(await codeOf(requireRoom(m, owner, w.dmRoomId, 'read'))).toBe('404 room_not_found');
    expect(await codeOf(requireRoom(m, actorFor(w.owner.id, null), w.roomId, 'read'))).toBe('404 not_found');
    expect(await codeOf(requireRoom(m, actorFor('usr_stranger', w.orgId), w.roomId, 'read'))).toBe('404 not_found');
  });
});

describe('approval flow', () => {
  it('follows the documented transitions and who may do each', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const s = t.rt.services;
    const owner = actorFor(w.owner.id, w.orgId);
    const member = actorFor(w.member.id, w.orgId);
    const tx = <T>(fn: (m: typeof s.ds.manager) => Promise<T>) => s.ds.transaction(fn);
    const rec = await tx((m) => createRecord(m, s.now(), owner, w.roomId, { title: 'Minutes' }));
    const act = (a: Actor, action: 'request' | 'approve' | 'reject' | 'withdraw') =>
      codeOf(tx((m) => actOnApproval(m, s.now(), a, w.roomId, rec.id, action)));
    expect(await act(member, 'approve')).toBe('409 invalid_state');
    expect(await act(owner, 'request')).toBe('ok');
    expect(await act(member, 'request')).toBe('409 invalid_state');
    expect(await act(owner, 'approve')).toBe('403 forbidden');
    expect(await act(member, 'withdraw')).toBe('403 forbidden');
    expect(await act(member, 'approve')).toBe('ok');
    // editing approved content resets the state
    const edited = await tx((m) => updateRecord(m, s.now(), owner, w.roomId, rec.id, { body: 'changed' }));
    expect(edited.approvalState).toBe('none');
    expect(await act(member, 'request')).toBe('ok');
    expect(await act(owner, 'reject')).toBe('ok');
  });
});
