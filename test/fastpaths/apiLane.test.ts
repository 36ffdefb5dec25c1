import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import { describe, expect, it } from 'vitest';
import { createApiLane } from '../../src/fastpaths/apiLane.js';

// src/fastpaths/apiLane.ts makes a request Express's the way express's own app.handle does, then hands it to the
// API surfaces without the app router's walk; a handler must not be able to tell it from the app's first layer.

const LANE = /^\/(?:v1|mcp)(?:[/?]|$)/i;

/** An app as src/app.ts builds it: the API first, a page after it, a last-resort error handler. */
function build(poweredBy: boolean) {
  const app = express();
  if (!poweredBy) app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  app.set('query parser', 'simple');
  app.set('etag', false);
  const seen: unknown[] = [];
  const api = express.Router();
  api.get('/v1/echo/:id', (req, res) => {
    seen.push({
      requestPrototype: Object.getPrototypeOf(req) === app.request,
      responsePrototype: Object.getPrototypeOf(res) === app.response,
      circular: req.res === res && res.req === req,
      app: req.app === app,
      locals: [Object.getPrototypeOf(res.locals), Object.keys(res.locals)],
      ip: req.ip,
      ips: req.ips,
      query: req.query,
      path: req.path,
      hostname: req.hostname,
      protocol: req.protocol,
      secure: req.secure,
      baseUrl: req.baseUrl,
      originalUrl: req.originalUrl,
      url: req.url,
      params: req.params,
      xhr: req.xhr,
      header: req.get('x-thing'),
      accepts: req.accepts(['json', 'html']),
    });
    res.status(201).json({ id: req.params.id, q: req.query });
  });
  api.get('/v1/boom', (_req, _res, next) => next(Object.assign(new Error('boom'), { status: 418 })));
  api.get('/v1/gone', (_req, _res, next) => next('route'));
  const lastResort = (err: unknown, _req: Request, res: Response) => {
    res.status(500).json({ caught: (err as Error).message, status: (err as { status?: number }).status });
  };
  app.use(api);
  app.get('/page', (_req, res) => void res.type('html').send('<p>page</p>'));
  app.use((req, res) => void res.status(404).json({ notFound: req.url }));
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => lastResort(err, req, res));
  return { app, api, lastResort, seen };
}

async function serve(listener: RequestListener) {
  const server = createServer(listener);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, [Symbol.asyncDispose]: () => new Promise<void>((r) => server.close(() => r())) };
}

async function exchange(base: string, p: string) {
  const r = await fetch(base + p, {
    headers: { 'x-thing': 'yes', 'x-forwarded-for': '203.0.113.9', accept: 'application/json' },
  });
  const headers = Object.fromEntries([...r.headers].filter(([k]) => !['date', 'keep-alive', 'connection'].includes(k)));
  return { status: r.status, headers, body: await r.text() };
}

describe('the API lane hands the surfaces the request and response the app would', () => {
  for (const poweredBy of [false, true]) {
    it(`same request, response and answers as the app's first layer (x-powered-by ${poweredBy ? 'on' : 'off'})`, async () => {
      const viaApp = build(poweredBy);
      const viaLane = build(poweredBy);
      await using plain = await serve(viaApp.app);
      await using lane = await serve(
        createApiLane({ app: viaLane.app, lane: LANE, api: viaLane.api, onError: viaLane.lastResort }),
      );
      const paths = [
        '/v1/echo/7?b=2&a=1&a=3',
        '/V1/echo/x%20y',
        '/mcp',
        '/v1/nothing',
        '/v1/boom',
        '/v1/gone',
        '/page',
        '/v1x/echo/1',
        '/v1?x=1',
      ];
      for (const p of paths) expect(await exchange(lane.base, p), p).toEqual(await exchange(plain.base, p));
      expect(viaLane.seen).toHaveLength(2);
      expect(viaLane.seen).toEqual(viaApp.seen);
      expect(viaLane.seen[0]).toMatchObject({
        requestPrototype: true,
        responsePrototype: true,
        circular: true,
        app: true,
        locals: [null, []],
      });
    });
  }

  it('takes only the lane: other request lines never reach the surfaces first', async () => {
    const { app, api, lastResort } = build(false);
    const before: string[] = [];
    await using lane = await serve(
      createApiLane({ app, lane: LANE, api, onError: lastResort, before: (req) => void before.push(req.url) }),
    );
    for (const p of ['/v1/echo/1', '/page', '/mcp/x', '/v10', '/favicon.ico']) await exchange(lane.base, p);
    expect(before).toEqual(['/v1/echo/1', '/mcp/x']);
  });
});
