import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLoad } from '../../bench/runLoad.js';

// bench/instructions.ts divides the instructions counted over a round by the requests it sent: `amount` sends exactly
// that many, whatever the time they take.
describe('runLoad with an amount', () => {
  let server: http.Server;
  let seen = 0;
  let base = '';
  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      seen++;
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends that many requests and reports them', async () => {
    const r = await runLoad(base, { method: 'GET', path: '/' }, { seconds: 0, amount: 37, connections: 3 });
    expect(r.total).toBe(37);
    expect(r.failures).toBe(0);
    expect(seen).toBe(37);
  });
});
