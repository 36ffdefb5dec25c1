import fc from 'fast-check';
import {
  ALL_SCOPES,
  call,
  createWorld,
  issueKey,
  startTestServer,
  type TestServer,
  type World,
} from '../helpers/harness.js';
import { createConnector } from '../../src/agents/connectors.js';
import { createUser } from '../../src/domain/users.js';
import { startReceiver, type Receiver } from '../webhooks/helpers.js';
import { createWebhook } from '../../src/webhooks/webhookConfig.js';
import { integrityProblems, organizationSnapshot, rowCounts } from './integrity.js';

/** Runs per operation: FUZZ_RUNS overrides; the default keeps each fuzz file well under a minute on SQLite. */
export const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 0) || undefined;
/** FUZZ_SEED replays a run (fast-check prints the seed and the shrunk counterexample of a failure). */
export const FUZZ_SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : 20261122;

/** fast-check parameters of one property: seedable, bounded, each operation on its own seed path. */
export const fuzzParams = (numRuns: number, salt: string): fc.Parameters<unknown> => ({
  numRuns: FUZZ_RUNS ?? numRuns,
  seed: (FUZZ_SEED ^ [...salt].reduce((h, c) => (h * 31 + c.charCodeAt(0)) | 0, 7)) | 0,
  endOnFailure: true,
});

/** The server under fuzz, a sandbox the fuzz may change (world A) and a witness it must never change (B). */
export interface FuzzWorld {
  t: TestServer;
  a: World;
  b: World;
  receiver: Receiver;
  /** Other keys of world A: the member's org key with every scope (approves what the owner requested), a
   * read-only org key, and the member's personal key. Never a key of B. */
  memberKey: string;
  limitedKeys: string[];
  /** World A's own objects by prefix (its ordinary room first): path parameters that all fit together. */
  sandbox: Record<string, string[]>;
  /** Existing ids by prefix, from both worlds: the fuzz reaches for real objects, its own and others'. */
  ids: Record<string, string[]>;
  /**
   * Fresh objects in A (a record waiting for approval, an untouched one, …) so state-dependent operations can succeed.
   */
  refresh(): Promise<void>;
  /** Proves after the run that B, the tables nobody may write and the invariants are intact. */
  verifyIntact(): Promise<{
    problems: string[];
    witnessBefore: unknown;
    witnessAfter: unknown;
    countsBefore: unknown;
    countsAfter: unknown;
  }>;
  close(): Promise<void>;
}

/** Objects of one world, created through the API as a client would; returns their ids by prefix. */
async function populate(t: TestServer, w: World, webhookId: string, connectorId: string) {
  const post = async (p: string, body: unknown) => {
    const r = await call(t, 'POST', p, { key: w.key, body });
    if (r.status >= 300) throw new Error(`setup ${p}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const room = `/v1/rooms/${w.roomId}`;
  const msg = await post(`${room}/messages`, { body: 'Kick-off notes' });
  const task = await post(`${room}/tasks`, { title: 'Write minutes', dueDate: '2026-12-01' });
  const rec = await post(`${room}/records`, { title: 'Weekly', body: 'Agenda' });
  const rec2 = await post(`${room}/records`, { title: 'Budget', body: 'Numbers' });
  await post(`${room}/records/${rec2.id}/approval/request`, {});
  const upload = await t.fetch(`${room}/files?filename=notes.txt&messageId=${msg.id}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.key}`, 'content-type': 'text/plain' },
    body: 'file bytes',
  });
  const file: any = await upload.json();
  const deliveries = await call(t, 'GET', `${room}/webhooks/${webhookId}/deliveries?limit=3`, { key: w.key });
  const run = await post(`${room}/agent-runs`, { connectorId, input: { text: 'Plan the week' } });
  return {
    acn: [connectorId],
    run: [run.id],
    msg: [msg.id],
    task: [task.id],
    rec: [rec.id, rec2.id],
    file: [file.id],
    wh: [webhookId],
    whd: deliveries.body.data.map((d: { id: string }) => d.id),
  };
}

/**
 * Starts a test server with limits out of the way (the fuzz must reach the operations, not the rate limit),
 * populates both worlds through the API, and snapshots the witness.
 */
export async function startFuzzWorld(env: Record<string, string> = {}): Promise<FuzzWorld> {
  const t = await startTestServer({
    env: { SVC_RATE_LIMIT: '10000000', SVC_MONTHLY_UNITS: '1000000000', SVC_MAX_UPLOAD_BYTES: '65536', ...env },
  });
  const s = t.rt.services;
  const receiver = await startReceiver();
  const a = await createWorld(t.rt, 'Sandbox');
  const b = await createWorld(t.rt, 'Witness');
  // someone of A's organization who is not in A's room yet: add_room_member can succeed
  const newcomer = await s.ds.transaction((m) =>
    createUser(m, s.now(), {
      email: `newcomer-${a.orgId}@example.test`,
      name: 'Newcomer',
      password: 'newcomer-password',
      organizationId: a.orgId,
      role: 'member',
    }),
  );
  const hookA = (await createWebhook(s, { roomId: a.roomId, url: receiver.url, createdById: a.owner.id })).webhook.id;
  const hookB = (await createWebhook(s, { roomId: b.roomId, url: `${receiver.url}?witness`, createdById: b.owner.id }))
    .webhook.id;
  // both worlds' keys may run agents, through a connector of their own organization
  for (const x of [a, b])
    x.key = (
      await issueKey(t.rt, { userId: x.owner.id, organizationId: x.orgId, scopes: [...ALL_SCOPES, 'agent:invoke'] })
    ).token;
  const connector = async (x: World) =>
    (
      await createConnector(s, {
        organizationId: x.orgId,
        name: 'Fuzz',
        url: receiver.url,
        scopes: ['mcp:tools', 'messages:write'],
      })
    ).connector.id;
  const acnA = await connector(a);
  const acnB = await connector(b);
  const ids: Record<string, string[]> = {
    room: [a.roomId, a.dmRoomId, b.roomId, b.dmRoomId],
    usr: [a.owner.id, a.member.id, newcomer.id, b.owner.id, b.member.id],
  };
  const add = (found: Record<string, string[]>) => {
    for (const [k, v] of Object.entries(found)) (ids[k] ??= []).push(...v.filter((id) => !ids[k]?.includes(id)));
  };
  add(await populate(t, b, hookB, acnB));
  const w: FuzzWorld = {
    t,
    a,
    b,
    receiver,
    ids,
    sandbox: {},
    memberKey: (await issueKey(t.rt, { userId: a.member.id, organizationId: a.orgId, scopes: ALL_SCOPES })).token,
    limitedKeys: [
      (
        await issueKey(t.rt, {
          userId: a.owner.id,
          organizationId: a.orgId,
          scopes: ['me:read', 'rooms:read', 'messages:read'],
        })
      ).token,
      (
        await issueKey(t.rt, {
          userId: a.member.id,
          scopes: ['me:read', 'rooms:read', 'rooms:write', 'messages:write', 'mcp:tools'],
        })
      ).token,
    ],
    async refresh() {
      const found = await populate(t, a, hookA, acnA);
      add(found);
      w.sandbox = { ...found, room: [a.roomId], usr: [newcomer.id, a.member.id], org: [a.orgId] };
    },
    async verifyIntact() {
      return {
        problems: await integrityProblems(t.rt),
        witnessBefore,
        witnessAfter: await organizationSnapshot(t.rt, b.orgId),
        countsBefore,
        countsAfter: await rowCounts(t.rt),
      };
    },
    async close() {
      await receiver.close();
      await t.close();
    },
  };
  await w.refresh();
  const witnessBefore = await organizationSnapshot(t.rt, b.orgId);
  const countsBefore = await rowCounts(t.rt);
  return w;
}

/** The error envelope, checked strictly (docs/rest-api.md#responses-and-errors): what is wrong with it, or null. */
export function envelopeProblem(body: unknown, requestIdHeader: string | null): string | null {
  const e = (body as { error?: Record<string, unknown> } | null)?.error;
  if (!e || typeof e !== 'object') return 'no error envelope';
  if (typeof e.code !== 'string' || !/^[a-z_]+$/.test(e.code)) return `bad code ${String(e.code)}`;
  if (typeof e.message !== 'string' || !e.message) return 'no message';
  if (typeof e.requestId !== 'string' || !e.requestId) return 'no requestId';
  if (requestIdHeader !== null && e.requestId !== requestIdHeader) return 'requestId differs from X-Request-Id';
  if (!e.details || typeof e.details !== 'object' || Array.isArray(e.details)) return 'details is not an object';
  if (/\bat .+\.(ts|js):\d+/.test(JSON.stringify(body))) return 'a stack trace leaked';
  return null;
}

/**
 * What the fuzzers read of an answer: status, headers, text and the parsed JSON (null when it is not JSON, a
 * download say). An event stream stays open: its answer is its status and headers (`stream`).
 */
export async function readAnswer(res: Response) {
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    await res.body?.cancel();
    return { status: res.status, headers: res.headers, text: '', json: null as any, stream: true };
  }
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON: judged by the caller */
  }
  return { status: res.status, headers: res.headers, text, json, stream: false };
}
