import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorld, type World } from '../helpers/harness.js';
import type { Child } from '../multiprocess/processes.js';
import { waitFor } from '../webhooks/processes.js';
import { serverDatabase, type ServerDatabase } from '../robustness/serverProcess.js';

// A request body that stops mid-way (the client goes away, resets the connection, or just stops
// sending) never ends the server process, on any surface: /v1 (JSON writes and file uploads), /mcp, the OAuth
// token, revocation and consent endpoints, and the pages' forms. A body that does not arrive within
// SVC_BODY_TIMEOUT_MS is answered 408 in the surface's own form and its connection closed; one client may
// send at most SVC_MAX_PENDING_BODIES bodies at once (429, closed), and a body given up frees its place.

/** One POST target per route family; `auth` adds the world's API key. */
const targets = (w: World) => [
  { name: 'REST write', path: '/v1/rooms', type: 'application/json', auth: true },
  {
    name: 'REST write, unauthenticated',
    path: `/v1/rooms/${w.roomId}/messages`,
    type: 'application/json',
    auth: false,
  },
  {
    name: 'REST upload',
    path: `/v1/rooms/${w.roomId}/files?filename=a.bin`,
    type: 'application/octet-stream',
    auth: true,
  },
  { name: 'REST unknown path', path: '/v1/nowhere', type: 'application/json', auth: true },
  { name: 'MCP', path: '/mcp', type: 'application/json', auth: true },
  { name: 'MCP, unauthenticated', path: '/mcp', type: 'application/json', auth: false },
  { name: 'OAuth token', path: '/oauth/token', type: 'application/x-www-form-urlencoded', auth: false },
  { name: 'OAuth revoke', path: '/oauth/revoke', type: 'application/x-www-form-urlencoded', auth: false },
  { name: 'OAuth consent', path: '/oauth/consent', type: 'application/x-www-form-urlencoded', auth: false },
  { name: 'sign-in form', path: '/login', type: 'application/x-www-form-urlencoded', auth: false },
  { name: 'sign-out form', path: '/logout', type: 'application/x-www-form-urlencoded', auth: false },
  {
    name: 'developer settings form',
    path: '/settings/developer/keys',
    type: 'application/x-www-form-urlencoded',
    auth: false,
  },
  { name: 'apps settings form', path: '/settings/apps/revoke', type: 'application/x-www-form-urlencoded', auth: false },
];

type Target = ReturnType<typeof targets>[number];

const head = (base: string, t: Target, key: string, declared: number, more: Record<string, string> = {}) => {
  const lines = [
    `POST ${t.path} HTTP/1.1`,
    `Host: ${new URL(base).host}`,
    `Content-Type: ${t.type}`,
    `Content-Length: ${declared}`,
    'Accept: application/json, text/event-stream',
    'Mcp-Protocol-Version: 2025-11-25',
    ...(t.auth ? [`Authorization: Bearer ${key}`] : []),
    ...Object.entries(more).map(([k, v]) => `${k}: ${v}`),
  ];
  return `${lines.join('\r\n')}\r\n\r\n`;
};

const connect = (base: string) =>
  new Promise<net.Socket>((resolve, reject) => {
    const s = net.connect(Number(new URL(base).port), '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });

/** Sends `data` and collects the whole answer until the server closes the connection. */
async function exchangeUntilClosed(
  base: string,
  data: string,
): Promise<{ status: number; headers: string; body: string }> {
  const s = await connect(base);
  let raw = '';
  s.on('data', (d) => (raw += d));
  const closed = new Promise<void>((resolve) => s.once('close', () => resolve()));
  s.on('error', () => undefined);
  s.write(data);
  await closed;
  const [headers, ...body] = raw.split('\r\n\r\n');
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1]), headers, body: body.join('\r\n\r\n') };
}

/** Like exchangeUntilClosed, but gives up (closing the connection) after `ms`: status NaN. */
async function exchangeWithin(
  base: string,
  data: string,
  ms: number,
): Promise<{ status: number; headers: string; body: string }> {
  const s = await connect(base);
  let raw = '';
  s.on('data', (d) => (raw += d));
  s.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => s.once('close', () => resolve()));
  const timer = setTimeout(() => s.destroy(), ms);
  s.write(data);
  await closed;
  clearTimeout(timer);
  const [headers, ...body] = raw.split('\r\n\r\n');
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1]), headers, body: body.join('\r\n\r\n') };
}

/** A complete request on its own connection: the status line's code. */
async function complete(
  base: string,
  t: Target,
  key: string,
  body: string,
): Promise<{ status: number; headers: string; body: string }> {
  return exchangeUntilClosed(base, head(base, t, key, Buffer.byteLength(body), { Connection: 'close' }) + body);
}

const partialBody = (t: Target) => (t.type === 'application/json' ? '{"name":"cut' : 'a=1&b=2&c');

describe('aborted and slow request bodies', () => {
  let db: ServerDatabase;
  let w: World;
  let server: Child & { base: string };

  beforeAll(async () => {
    db = await serverDatabase({ SVC_BODY_TIMEOUT_MS: '1500', LOG_LEVEL: 'info' });
    const rt = await db.open();
    w = await createWorld(rt);
    await rt.close();
    server = await db.start();
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await db?.remove();
  });

  const stillServing = async () => {
    expect(server.proc.exitCode, server.output().slice(-2000)).toBeNull();
    expect((await fetch(`${server.base}/healthz`)).status).toBe(200);
    const me = await fetch(`${server.base}/v1/me`, { headers: { authorization: `Bearer ${w.key}` } });
    expect(me.status).toBe(200);
    expect(server.output()).not.toMatch(/unhandled|triggerUncaughtException|Error: aborted/i);
  };

  it(
    'a body cut off mid-way (closed, reset, or chunked and closed) on every route family leaves the server up and serving',
    { timeout: 120_000 },
    async () => {
      for (const t of targets(w)) {
        for (const how of ['close', 'reset', 'chunked'] as const) {
          const s = await connect(server.base);
          s.on('error', () => undefined);
          const closed = new Promise<void>((resolve) => s.once('close', () => resolve()));
          if (how === 'chunked') {
            s.write(
              head(server.base, t, w.key, 0).replace('Content-Length: 0', 'Transfer-Encoding: chunked') +
                `a\r\n${partialBody(t).slice(0, 10)}\r\n`,
            );
          } else {
            s.write(head(server.base, t, w.key, 1000) + partialBody(t));
          }
          // let the server take the request and start reading its body before the client goes
          await new Promise((r) => setTimeout(r, 50));
          if (how === 'reset') s.resetAndDestroy();
          else s.destroy();
          await closed;
        }
      }
      // every body the server was reading has been given up (as seen from outside: the server still answers all)
      await stillServing();
      for (const t of targets(w)) {
        const r = await complete(server.base, t, w.key, t.type === 'application/json' ? '{}' : 'a=1');
        expect(r.status, `${t.name}: ${r.body.slice(0, 200)}`).toBeLessThan(500);
      }
      await stillServing();
    },
  );

  it(
    "a body that stops arriving is answered 408 in the surface's own form, and its connection is closed",
    { timeout: 120_000 },
    async () => {
      const expectations: Record<string, (r: { body: string; headers: string }) => void> = {
        'REST write': (r) =>
          expect(JSON.parse(r.body).error).toMatchObject({ code: 'request_timeout', requestId: expect.any(String) }),
        'REST upload': (r) => expect(JSON.parse(r.body).error.code).toBe('request_timeout'),
        MCP: (r) =>
          expect(JSON.parse(r.body)).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) }, id: null }),
        'OAuth token': (r) =>
          expect(JSON.parse(r.body)).toMatchObject({ error: 'invalid_request', error_description: expect.any(String) }),
        'OAuth revoke': (r) => expect(JSON.parse(r.body)).toMatchObject({ error: 'invalid_request' }),
        'sign-in form': (r) => expect(r.headers).toMatch(/content-type: text\/html/i),
        'OAuth consent': (r) => expect(r.headers).toMatch(/content-type: text\/html/i),
        'developer settings form': (r) => expect(r.headers).toMatch(/content-type: text\/html/i),
      };
      const all = targets(w);
      await Promise.all(
        Object.entries(expectations).map(async ([name, check]) => {
          const t = all.find((x) => x.name === name)!;
          // the headers and part of the body, then nothing: the server answers and closes the connection itself
          const r = await exchangeUntilClosed(server.base, head(server.base, t, w.key, 1000) + partialBody(t));
          expect(r.status, `${name}: ${r.headers}\n${r.body.slice(0, 300)}`).toBe(408);
          expect(r.headers).toMatch(/^connection: close$/im);
          check(r);
        }),
      );
      // an unauthenticated one is refused before its body matters, and its connection is closed all the same
      const unauthenticated = all.find((x) => x.name === 'REST write, unauthenticated')!;
      const r = await exchangeUntilClosed(
        server.base,
        head(server.base, unauthenticated, w.key, 1000) + partialBody(unauthenticated),
      );
      expect(r.status).toBe(401);
      await stillServing();
    },
  );
});

describe('many slow bodies from one client', () => {
  it(
    'one client sending more bodies at once than SVC_MAX_PENDING_BODIES gets 429 and a closed connection; giving bodies up frees their places',
    { timeout: 120_000 },
    async () => {
      const db = await serverDatabase({ SVC_BODY_TIMEOUT_MS: '600000', SVC_MAX_PENDING_BODIES: '4' });
      let server: (Child & { base: string }) | undefined;
      try {
        const rt = await db.open();
        const w = await createWorld(rt);
        await rt.close();
        server = await db.start();
        const base = server.base;
        const t = targets(w)[0];
        const held: net.Socket[] = [];
        for (let i = 0; i < 4; i++) {
          const s = await connect(base);
          s.on('error', () => undefined);
          s.write(head(base, t, w.key, 1000) + partialBody(t));
          held.push(s);
        }
        // once the server holds the four, the next body the same client is still sending is refused at once
        let refused: Awaited<ReturnType<typeof complete>> | undefined;
        await waitFor(async () => {
          // (not refused in time: the four are not all counted yet, and this one is given up, freeing its place)
          const r = await exchangeWithin(
            base,
            head(base, t, w.key, 1000, { Connection: 'close' }) + partialBody(t),
            3000,
          );
          if (r.status === 429) refused = r;
          else expect(r.status).toBeNaN();
          return refused !== undefined;
        }, 'a body over the limit refused');
        expect(JSON.parse(refused!.body).error).toMatchObject({
          code: 'rate_limited',
          details: { reason: 'too_many_pending_bodies', limit: 4 },
        });
        expect(refused!.headers).toMatch(/^retry-after: 1$/im);
        expect(refused!.headers).toMatch(/^connection: close$/im);
        // requests without a body are not held back, nor is a body that arrives whole with its request (it is not
        // being sent: nothing of it is pending)
        expect((await fetch(`${base}/v1/me`, { headers: { authorization: `Bearer ${w.key}` } })).status).toBe(200);
        expect((await complete(base, t, w.key, JSON.stringify({ name: 'whole' }))).status).toBe(201);

        for (const s of held) s.destroy();
        await waitFor(
          async () => (await complete(base, t, w.key, JSON.stringify({ name: 'after' }))).status === 201,
          'places freed',
        );
        expect(server.proc.exitCode).toBeNull();
        expect(server.output()).not.toMatch(/unhandled|triggerUncaughtException/i);
      } finally {
        await server?.stop();
        await db.remove();
      }
    },
  );
});
