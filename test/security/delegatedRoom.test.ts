import { describe, expect, it } from 'vitest';
import { createRoom } from '../../src/domain/rooms.js';
import { NEVER_DELEGATED, SCOPES } from '../../src/domain/scopes.js';
import { audienceOf } from '../../src/http/surfaces.js';
import { RPC_INVALID_PARAMS } from '../../mcp/server/rpcError.js';
import { createWebhook } from '../../src/webhooks/webhookConfig.js';
import { sql } from '../../db/sql.js';
import { call, createWorld, startTestServer, type TestServer } from '../helpers/harness.js';
import { postMcp, toolCall } from '../mcp/mcpClient.js';
import { startReceiver } from '../webhooks/helpers.js';
import { addConnector, invokeDue, invokerKey, startRun } from '../agents/helpers.js';

// Penetration test 3, finding 1 (SECURITY.md): an agent run's delegated token is restricted to its run's room.
// Every MCP tool, every MCP resource template and every REST operation of the OpenAPI document is walked
// from the live catalogs (a new tool or operation is covered without touching this file), with its path and
// arguments filled with the ids of a second room the delegating human can read: each answers not found (or a
// scope refusal, decided before any lookup), or returns nothing of that room, and nothing is written.

/** Everything a delegated token might leak or change, keyed by the argument / path parameter names that take it. */
interface SecondRoom {
  ids: Record<string, string>;
  /** Strings of the second room (its ids and its content): none may appear in a successful answer. */
  markers: string[];
}

/** The codes a refused call on the second room may answer: not found, or a scope refusal (no lookup before it). */
const REFUSALS = new Set(['not_found', 'room_not_found', 'insufficient_scope']);

/** Rows of every table holding room data, in a stable order: equal before and after the walk = nothing written. */
const ROOM_DATA = [
  'rooms',
  'room_members',
  'messages',
  'tasks',
  'records',
  'approvals',
  'files',
  'webhooks',
  'webhook_deliveries',
  'webhook_attempts',
  'agent_runs',
  'events',
];
async function snapshot(t: TestServer): Promise<string> {
  const out: Record<string, unknown[]> = {};
  for (const table of ROOM_DATA)
    out[table] = (await sql(t.rt.ds, `SELECT * FROM "${table}" ORDER BY "${table === 'events' ? 'seq' : 'id'}"`)).rows;
  return JSON.stringify(out);
}

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  enum?: unknown[];
  examples?: unknown[];
  example?: unknown;
  format?: string;
  anyOf?: Schema[];
  $ref?: string;
};

/**
 * Arguments for a JSON schema: required properties get the second room's id when named like one (`roomId`,
 * `taskId`…), else a valid example; `optionalId` (an optional id such as list_events' roomId filter or
 * upload_file's messageId) is added too, since a filter must not open the room either. Nested objects get all
 * their id properties.
 */
function argsFor(
  schema: Schema,
  ids: Record<string, string>,
  resolve: (s: Schema) => Schema = (s) => s,
  optionalId?: string | 'all',
): Record<string, unknown> {
  const s = resolve(schema);
  const out: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(s.properties ?? {})) {
    const p = resolve(raw);
    const required = s.required?.includes(name);
    if (ids[name] !== undefined && (required || optionalId === 'all' || optionalId === name)) out[name] = ids[name];
    else if (required) out[name] = valueFor(name, p, ids, resolve);
  }
  return out;
}

/** A tool or operation taking a kind of id the walk has no object for fails it, rather than going unwalked. */
function idKnown(name: string, ids: Record<string, string>): void {
  if (/Id$/.test(name) && ids[name] === undefined)
    throw new Error(`the walk has no ${name}: give the second room one in setUp`);
}

/** One set of arguments per optional id property (and one without any), so each id is tried on its own. */
function argVariants(
  schema: Schema,
  ids: Record<string, string>,
  resolve: (s: Schema) => Schema = (s) => s,
): Record<string, unknown>[] {
  const s = resolve(schema);
  for (const name of Object.keys(s.properties ?? {})) idKnown(name, ids);
  const optionalIds = Object.keys(s.properties ?? {}).filter((n) => ids[n] !== undefined && !s.required?.includes(n));
  return [argsFor(s, ids, resolve), ...optionalIds.map((n) => argsFor(s, ids, resolve, n))];
}

function valueFor(name: string, raw: Schema, ids: Record<string, string>, resolve: (s: Schema) => Schema): unknown {
  idKnown(name, ids);
  const p = raw.anyOf ? resolve(raw.anyOf.find((x) => resolve(x).type !== 'null') ?? raw.anyOf[0]) : raw;
  if (p.enum) return p.enum[0];
  const type = Array.isArray(p.type) ? p.type.find((x) => x !== 'null') : p.type;
  if (type === 'object') return argsFor(p, ids, resolve, 'all');
  if (type === 'array') return [];
  if (type === 'integer' || type === 'number') return 1;
  if (type === 'boolean') return false;
  if (p.examples?.length) return p.examples[0];
  if (p.example !== undefined) return p.example;
  // the MCP schemas carry no examples: a time or a date the input would accept, so the call reaches the room check
  if (p.format === 'date-time') return new Date(Date.now() - 3_600_000).toISOString();
  if (p.format === 'date') return '2026-12-01';
  return name === 'filename' ? 'needle.txt' : 'needle';
}

const touchesSecondRoom = (args: unknown, ids: Record<string, string>) => {
  const text = JSON.stringify(args);
  return Object.values(ids).some((id) => text.includes(id));
};

async function setUp(t: TestServer) {
  const w = await createWorld(t.rt);
  const key = await invokerKey(t.rt, w);
  const s = t.rt.services;
  // a second room of the organization that the delegating human (the owner) can read and write
  const second = await s.ds.transaction((m) =>
    createRoom(m, s.now(), {
      name: 'Second needle-room',
      createdById: w.owner.id,
      organizationId: w.orgId,
      memberIds: [w.member.id],
    }),
  );
  const room = `/v1/rooms/${second.id}`;
  const hook = (await createWebhook(s, { roomId: second.id, url: 'http://127.0.0.1:9/hook', createdById: w.owner.id }))
    .webhook.id;
  const msg = (await call(t, 'POST', `${room}/messages`, { key, body: { body: 'needle-second message' } })).body;
  const task = (
    await call(t, 'POST', `${room}/tasks`, { key, body: { title: 'needle-second task', description: 'needle-second' } })
  ).body;
  const rec = (
    await call(t, 'POST', `${room}/records`, { key, body: { title: 'needle-second minutes', body: 'needle-second' } })
  ).body;
  const file = (
    await call(t, 'POST', `${room}/files?filename=needle-second.txt`, {
      key,
      body: 'needle-second bytes',
      headers: { 'content-type': 'text/plain' },
    })
  ).body;
  const delivery = (await call(t, 'GET', `${room}/webhooks/${hook}/deliveries`, { key })).body.data[0].id as string;
  // the run's own room has content of its own, so a search that finds nothing proves nothing
  await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key, body: { body: 'needle-first message' } });

  const rx = await startReceiver();
  rx.script.push(...Array.from({ length: 10 }, () => ({ status: 202 })));
  // the connector may be delegated everything that can be delegated: refusals then come from the room alone
  const connector = await addConnector(
    t.rt,
    w.orgId,
    rx.url,
    SCOPES.filter((x) => !NEVER_DELEGATED.has(x)),
  );
  const started = await startRun(t, key, w.roomId, connector.id);
  expect(started.status).toBe(202);
  await invokeDue(t.rt);
  const token = JSON.parse(rx.requests[0].body.toString('utf8')).delegation.accessToken as string;
  // a run of the second room (never invoked: no worker runs here)
  const otherRun = (await startRun(t, key, second.id, connector.id)).body;
  const ids = {
    roomId: second.id,
    messageId: msg.id,
    taskId: task.id,
    recordId: rec.id,
    fileId: file.id,
    webhookId: hook,
    deliveryId: delivery,
    runId: otherRun.id,
  };
  // `q`: what both rooms' content holds, so a search is a real probe
  // (the MCP schemas carry no examples: arguments with a format of their own get a valid value here)
  const fill = {
    ...ids,
    connectorId: connector.id,
    organizationId: w.orgId,
    userId: w.member.id,
    assigneeId: w.member.id,
    q: 'needle',
    contentType: 'text/plain',
  };
  const target: SecondRoom = { ids, markers: [...Object.values(ids), 'needle-second'] };
  return { w, key, token, rx, target, fill, run: started.body.id as string };
}

const leaked = (text: string, target: SecondRoom) => target.markers.filter((x) => text.includes(x));

/** The error code of a tool call's answer (a tool error's envelope), or undefined for a success. */
const codeOf = (r: { status: number; headers: Headers; body: any }): string | undefined =>
  r.status === 403 && /insufficient_scope/.test(r.headers.get('www-authenticate') ?? '')
    ? 'insufficient_scope'
    : r.body?.result?.isError
      ? (JSON.parse(r.body.result.content[0].text).error.code as string)
      : r.body?.error
        ? 'jsonrpc_error'
        : undefined;

/** Calls every tool of `names` with arguments filled from `fill`, checking each answer as the walk requires. */
async function walkTools(
  t: TestServer,
  token: string,
  names: Map<string, Schema>,
  fill: Record<string, string>,
  target: SecondRoom,
): Promise<void> {
  for (const [name, schema] of names)
    for (const variant of argVariants(schema, fill)) {
      let args = variant;
      let r = await postMcp(t, toolCall(name, args), { token });
      // input refused before any lookup (one of two optional fields, say): add the optional fields one at a time
      const optional = Object.keys(schema.properties ?? {}).filter(
        (p) => !(p in args) && fill[p] === undefined && !['cursor', 'idempotencyKey'].includes(p),
      );
      for (const extra of optional) {
        if (codeOf(r) !== 'validation_error') break;
        args = { ...variant, [extra]: valueFor(extra, schema.properties![extra], fill, (x) => x) };
        r = await postMcp(t, toolCall(name, args), { token });
      }
      const what = `${name} ${JSON.stringify(args)}: ${r.text.slice(0, 300)}`;
      if (codeOf(r) === 'insufficient_scope') continue;
      expect(r.status, what).toBe(200);
      const result = r.body.result;
      expect(result, what).toBeDefined();
      if (result.isError) {
        if (touchesSecondRoom(args, target.ids)) expect(REFUSALS.has(codeOf(r)!), what).toBe(true);
        else expect(codeOf(r), what).not.toBe('internal_error');
      } else {
        // a success (get_me, list_rooms, search_content, list_events filtered by the second room…) shows nothing of it
        expect(leaked(JSON.stringify(result), target), what).toEqual([]);
      }
    }
}

/** The second room's own rows (room, members, content, webhook history, runs, events), to show none changed. */
async function secondRoomRows(t: TestServer, target: SecondRoom): Promise<string> {
  const { roomId, webhookId } = target.ids;
  const out: Record<string, unknown[]> = {
    rooms: (await sql(t.rt.ds, 'SELECT * FROM "rooms" WHERE "id" = ?', [roomId])).rows,
  };
  for (const table of ROOM_DATA.filter((x) => !['rooms', 'webhook_deliveries', 'webhook_attempts'].includes(x))) {
    out[table] = (
      await sql(
        t.rt.ds,
        `SELECT * FROM "${table}" WHERE "roomId" = ? ORDER BY "${table === 'events' ? 'seq' : 'id'}"`,
        [roomId],
      )
    ).rows;
  }
  for (const table of ['webhook_deliveries', 'webhook_attempts']) {
    out[table] = (await sql(t.rt.ds, `SELECT * FROM "${table}" WHERE "webhookId" = ? ORDER BY "id"`, [webhookId])).rows;
  }
  return JSON.stringify(out);
}

describe("security: a delegated agent token sees only its run's room (penetration test 3)", () => {
  it("search_content finds the run's room only, never another room the human can read", async () => {
    await using t = await startTestServer();
    const { token, rx, target, w } = await setUp(t);
    await using _rx = rx;
    const r = await postMcp(t, toolCall('search_content', { q: 'needle' }), { token });
    const hits = r.body.result.structuredContent.data as { roomId: string }[];
    expect(hits.map((h) => h.roomId)).toEqual([w.roomId]);
    expect(leaked(JSON.stringify(r.body), target)).toEqual([]);
  });

  it('walks every MCP tool of tools/list and every resource template against a second room: not found or nothing of it, nothing written', async () => {
    await using t = await startTestServer();
    const { key, token, rx, target, fill, w } = await setUp(t);
    await using _rx = rx;
    // the catalog as an invoker sees it and as the delegated token sees it (complete_agent_run is the token's)
    const names = new Map<string, Schema>();
    for (const who of [key, token]) {
      const list = await postMcp(t, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, { token: who });
      for (const tool of list.body.result.tools as { name: string; inputSchema: Schema }[])
        names.set(tool.name, tool.inputSchema);
    }
    expect(names.size).toBeGreaterThan(30);
    const before = await snapshot(t);
    await walkTools(t, token, names, fill, target);

    const templates = await postMcp(
      t,
      { jsonrpc: '2.0', id: 1, method: 'resources/templates/list', params: {} },
      { token },
    );
    const uriTemplates = (templates.body.result.resourceTemplates as { uriTemplate: string }[]).map(
      (x) => x.uriTemplate,
    );
    expect(uriTemplates.length).toBeGreaterThan(0);
    for (const template of uriTemplates) {
      const uri = template.replace(/\{(\w+)\}/g, (_, v: string) => fill[v as keyof typeof fill] ?? `missing_${v}`);
      expect(uri, template).not.toContain('missing_');
      const r = await postMcp(t, { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri } }, { token });
      expect(r.body.error?.code, `${uri}: ${r.text}`).toBe(RPC_INVALID_PARAMS);
      expect(leaked(JSON.stringify(r.body.error.data?.error ?? {}), { ...target, markers: ['needle-second'] })).toEqual(
        [],
      );
    }
    const listed = await postMcp(t, { jsonrpc: '2.0', id: 1, method: 'resources/list', params: {} }, { token });
    expect(leaked(listed.text, target)).toEqual([]);
    expect(await snapshot(t)).toBe(before);

    // the same through the run's own room (IDOR): the second room's objects named under the room the token may use
    const own = await secondRoomRows(t, target);
    await walkTools(t, token, names, { ...fill, roomId: w.roomId }, target);
    expect(await secondRoomRows(t, target)).toBe(own);
  });

  it('walks every REST operation of the OpenAPI document against a second room: refused by audience, and by room once the audience is /v1', async () => {
    await using t = await startTestServer();
    const { token, rx, target, fill, run, w } = await setUp(t);
    await using _rx = rx;
    const doc = (await call(t, 'GET', '/v1/openapi.json')).body;
    const resolve = (s: Schema): Schema => {
      if (!s?.$ref) return s;
      return resolve(
        s.$ref
          .split('/')
          .slice(1)
          .reduce((o: any, k) => o[k], doc),
      );
    };
    type Param = { name: string; in: string; required?: boolean; schema: Schema };
    type Request = { method: string; path: string; body?: string; headers: Record<string, string>; touches: boolean };
    /** Every operation, its path and body filled from `ids`; one request per optional id query parameter besides. */
    const requestsFor = (ids: Record<string, string>): Request[] => {
      const out: Request[] = [];
      for (const [template, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
        for (const [method, op] of Object.entries(ops)) {
          if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
          // the event stream never ends: its rooms are those of GET /v1/events (test/rest/eventStream.test.ts)
          if ('text/event-stream' in (op.responses?.['200']?.content ?? {})) continue;
          const params = ((op.parameters ?? []) as Schema[]).map((p) => resolve(p) as unknown as Param);
          const path = template.replace(/\{(\w+)\}/g, (_, v: string) => ids[v] ?? `missing_${v}`);
          expect(path, template).not.toContain('missing_');
          const query = new URLSearchParams();
          for (const p of params.filter((x) => x.in === 'query' && x.required))
            query.set(p.name, ids[p.name] ?? String(valueFor(p.name, resolve(p.schema), ids, resolve)));
          for (const p of params) idKnown(p.name, ids);
          const optionalIds = params
            .filter((x) => x.in === 'query' && !x.required && ids[x.name] !== undefined)
            .map((x) => x.name);
          const content = op.requestBody?.content as Record<string, { schema: Schema }> | undefined;
          let body: string | undefined;
          const headers: Record<string, string> = {};
          if (content?.['application/json']) {
            body = JSON.stringify(argsFor(content['application/json'].schema, ids, resolve));
            headers['content-type'] = 'application/json';
          } else if (content) {
            body = 'needle';
            headers['content-type'] = 'text/plain';
          }
          for (const extra of [undefined, ...optionalIds]) {
            const q = new URLSearchParams(query);
            if (extra) q.set(extra, ids[extra]);
            const full = `${path}${q.size ? `?${q}` : ''}`;
            out.push({
              method: method.toUpperCase(),
              path: full,
              body,
              headers,
              touches: touchesSecondRoom(`${full} ${body ?? ''}`, target.ids),
            });
          }
        }
      }
      return out;
    };
    const send = async (r: Request) => {
      const res = await t.fetch(r.path, {
        method: r.method,
        headers: { ...r.headers, authorization: `Bearer ${token}` },
        body: r.body,
      });
      return { status: res.status, text: await res.text() };
    };
    const walk = async (requests: Request[]) => {
      for (const r of requests) {
        const res = await send(r);
        const what = `${r.method} ${r.path} ${r.body ?? ''}: ${res.status} ${res.text.slice(0, 300)}`;
        expect(res.status, what).toBeLessThan(500);
        if (res.status >= 400) {
          const code = JSON.parse(res.text).error.code as string;
          if (r.touches) expect(REFUSALS.has(code), what).toBe(true);
        } else {
          expect(leaked(res.text, target), what).toEqual([]);
        }
      }
    };
    const requests = requestsFor(fill);
    expect(requests.length).toBeGreaterThan(30);
    const before = await snapshot(t);
    // as minted, the token is for /mcp: every REST operation refuses it
    for (const r of requests) {
      const res = await send(r);
      expect(res.status, `${r.method} ${r.path}`).toBe(403);
      expect(JSON.parse(res.text).error.code).toBe('invalid_audience');
    }
    // the domain refuses too: the same token pinned to the REST audience (as a future delegation to /v1 would be)
    await sql(
      t.rt.ds,
      'UPDATE "oauth_grants" SET "resource" = ? WHERE "id" IN (SELECT "grantId" FROM "oauth_tokens" WHERE "agentRunId" = ?)',
      [audienceOf(t.baseUrl, 'rest'), run],
    );
    await walk(requests);
    expect(await snapshot(t)).toBe(before);
    // and through the run's own room (IDOR): the second room's objects named under the room the token may use
    const own = await secondRoomRows(t, target);
    await walk(requestsFor({ ...fill, roomId: w.roomId }));
    expect(await secondRoomRows(t, target)).toBe(own);
  });
});

describe('security: abuse cases of agent runs (penetration test 3)', () => {
  it("a run's token finishing another run of its own room or replaying the human's idempotency key, another organization's member on the run routes, callers without a valid token: all refused, nothing changed", async () => {
    await using t = await startTestServer();
    const { key, token, rx, run, w, target } = await setUp(t);
    await using _rx = rx;
    const connectorId = (await sql<{ id: string }>(t.rt.ds, 'SELECT "id" FROM "agent_connectors"')).rows[0].id;
    const sibling = (await startRun(t, key, w.roomId, connectorId)).body;
    const rows = async () => JSON.stringify((await sql(t.rt.ds, 'SELECT * FROM "agent_runs" ORDER BY "id"')).rows);
    const before = await rows();

    // a connector's token ends only its own run (the sibling's status is the invoker's to change)
    const complete = await postMcp(
      t,
      toolCall('complete_agent_run', { roomId: w.roomId, runId: sibling.id, status: 'failed', error: 'x' }),
      { token },
    );
    expect(complete.body.result.isError).toBe(true);
    expect(['forbidden', 'not_found']).toContain(codeOf(complete));
    const cancel = await postMcp(t, toolCall('cancel_agent_run', { roomId: w.roomId, runId: sibling.id }), { token });
    expect(codeOf(cancel)).toBe('insufficient_scope');

    // an idempotency key the human used on the second room: never replayed to the token (keys are per credential)
    const args = { roomId: target.ids.roomId, body: 'needle-second once', idempotencyKey: 'shared-key-1' };
    expect((await postMcp(t, toolCall('create_message', args), { token: key })).body.result.isError).toBeFalsy();
    const replay = await postMcp(t, toolCall('create_message', args), { token });
    expect(codeOf(replay)).toBe('not_found');
    expect(leaked(replay.text, target)).toEqual([]);

    // a member of another organization, with every scope: the room, its runs and its connector do not exist for them
    const other = await createWorld(t.rt, 'Other');
    const stranger = await invokerKey(t.rt, other);
    for (const [method, path, body] of [
      ['GET', `/v1/rooms/${w.roomId}/agent-runs`],
      ['GET', `/v1/rooms/${w.roomId}/agent-runs/${run}`],
      ['POST', `/v1/rooms/${w.roomId}/agent-runs/${run}/cancel`],
      ['POST', `/v1/rooms/${w.roomId}/agent-runs`, { connectorId, input: { text: 'x' } }],
      ['POST', `/v1/rooms/${other.roomId}/agent-runs`, { connectorId, input: { text: 'x' } }],
    ] as [string, string, unknown?][]) {
      const r = await call(t, method, path, { key: stranger, body });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.error.code).toBe('not_found');
    }

    // no token, a made-up one, the run's token altered
    for (const bearer of [undefined, 'svc_at_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', `${token}x`]) {
      const r = await postMcp(
        t,
        toolCall('complete_agent_run', { roomId: w.roomId, runId: run, status: 'succeeded' }),
        { token: bearer },
      );
      expect(r.status).toBe(401);
    }
    expect(await rows()).toBe(before);
  });
});
