import type { AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { sendOAuthError } from '../../src/oauth/OAuthError.js';
import { pageErrorHandler } from '../../src/web/pageErrorHandler.js';
import type { Services } from '../../src/domain/services.js';

// What the driver throws when SQLite's lock outlives busy_timeout (TypeORM wraps it, keeping driverError).
const busy = () =>
  Object.assign(new Error('QueryFailedError: database is locked'), { driverError: { code: 'SQLITE_BUSY' } });

describe('a busy database on the OAuth endpoints and pages answers 503, never 500', () => {
  it('token/revoke render RFC 6749 temporarily_unavailable with Retry-After; pages a 503 page', async () => {
    const logged: unknown[] = [];
    const s = { log: { error: (o: unknown) => logged.push(o) } } as unknown as Services;
    const app = express();
    app.post('/oauth/token', (_req, res) => sendOAuthError(res, busy()));
    app.post('/oauth/other', (_req, res) => sendOAuthError(res, new Error('boom')));
    app.get('/page', () => {
      throw busy();
    });
    app.use(pageErrorHandler(s));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const token = await fetch(`${base}/oauth/token`, { method: 'POST' });
      expect(token.status).toBe(503);
      expect(token.headers.get('retry-after')).toBe('1');
      expect(token.headers.get('cache-control')).toBe('no-store');
      expect(await token.json()).toEqual({
        error: 'temporarily_unavailable',
        error_description: 'The server is busy; retry shortly',
      });
      const other = await fetch(`${base}/oauth/other`, { method: 'POST' });
      expect(other.status).toBe(500);
      expect(((await other.json()) as { error: string }).error).toBe('server_error');
      const page = await fetch(`${base}/page`);
      expect(page.status).toBe(503);
      expect(page.headers.get('retry-after')).toBe('1');
      expect(await page.text()).toContain('Nothing was changed');
      expect(logged).toHaveLength(0);
    } finally {
      server.close();
    }
  });
});
