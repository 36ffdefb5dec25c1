// Mirrors express@5.3.0: `app.handle` (lib/application.js), the set-up Express makes of a request and its response
// before its router walks the app's layers. Paired tests: test/fastpaths/apiLane.test.ts (a handler reached through
// the lane sees the request and response a handler mounted first on the app sees) and
// test/fastpaths/mirrors.test.ts (pinned version, fingerprint).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express, NextFunction, Request, Response } from 'express';

export interface ApiLaneOptions {
  /** The whole app: every request the lane does not take, and every one its handler passes on. */
  app: Express;
  /** The request lines the lane takes (origin form: `req.url`). */
  lane: RegExp;
  /** The API surfaces, as one Express handler (the app's first layer too, for requests the lane does not take). */
  api: (req: Request, res: Response, next: NextFunction) => void;
  /** Runs on every request the lane takes, before `api` (what the app's earlier layers would have done). */
  before?: (req: Request, res: Response) => void;
  /** The app's last-resort error handler, for an error `api` passes on. */
  onError: (err: unknown, req: Request, res: Response) => void;
}

/**
 * The API lane: a request whose line matches `lane` goes straight to `api`, with the request and response
 * made Express's exactly as Express's own `app.handle` makes them (circular references, the app's
 * `request`/`response` prototypes, `locals`), so `req.ip`, `req.query` and `res.json` behave the same. It
 * skips only the router's walk of the app's layers, a large share of an API call's CPU. Anything `api` passes
 * on goes through the whole app as before; any other request line (a page, or an unusual form such as an
 * absolute URI) is the app's from the start.
 */
export function createApiLane({ app, lane, api, before, onError }: ApiLaneOptions) {
  return function apiLane(req: IncomingMessage, res: ServerResponse): void {
    if (!lane.test(req.url ?? '')) return void app(req, res);
    if (app.enabled('x-powered-by')) res.setHeader('X-Powered-By', 'Express');
    const xreq = Object.setPrototypeOf(req, app.request) as Request;
    const xres = Object.setPrototypeOf(res, app.response) as Response;
    xreq.res = xres;
    xres.req = xreq;
    xres.locals = Object.create(null) as Response['locals'];
    before?.(xreq, xres);
    api(xreq, xres, (err?: unknown) => (err ? onError(err, xreq, xres) : void app(req, res)));
  };
}
