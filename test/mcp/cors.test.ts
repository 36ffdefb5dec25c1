import { describe, expect, it } from 'vitest';
import { listAudit } from '../../src/auth/audit.js';
import { createWorld, startTestServer } from '../helpers/harness.js';
import { postMcp, toolCall } from './mcpClient.js';

const preflight = (origin: string) => ({
  method: 'OPTIONS',
  headers: {
    origin,
    'access-control-request-method': 'POST',
    'access-control-request-headers':
      'authorization, content-type, mcp-protocol-version, mcp-session-id, last-event-id',
  },
});

describe('MCP for browser-based clients: CORS and the Origin check', () => {
  it('answers preflights from an allowed origin and exposes the auth and session headers', async () => {
    await using t = await startTestServer({ env: { SVC_MCP_ALLOWED_ORIGINS: 'https://inspector.example.com' } });
    const r = await t.fetch('/mcp', preflight('https://inspector.example.com'));
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-origin')).toBe('https://inspector.example.com');
    const allowed = r.headers
      .get('access-control-allow-headers')!
      .toLowerCase()
      .split(',')
      .map((h) => h.trim());
    expect(allowed).toEqual(
      expect.arrayContaining([
        'authorization',
        'content-type',
        'mcp-protocol-version',
        'mcp-session-id',
        'last-event-id',
      ]),
    );
    expect(r.headers.get('access-control-allow-methods')).toMatch(/POST/);

    // an actual request: the 401's challenge must be readable by the page
    const unauth = await postMcp(t, toolCall('get_me'), { headers: { origin: 'https://inspector.example.com' } });
    expect(unauth.status).toBe(401);
    expect(unauth.headers.get('access-control-allow-origin')).toBe('https://inspector.example.com');
    const exposed = unauth.headers.get('access-control-expose-headers')!.toLowerCase();
    expect(exposed).toContain('www-authenticate');
    expect(exposed).toContain('mcp-session-id');
  });

  it('lets the BASE_URL origin and, on a loopback BASE_URL, loopback origins through', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    for (const origin of [t.baseUrl, 'http://localhost:6274', 'http://127.0.0.1:5173']) {
      const r = await postMcp(t, toolCall('get_me'), { token: w.key, headers: { origin } });
      expect(r.status, origin).toBe(200);
      expect(r.headers.get('access-control-allow-origin')).toBe(origin);
    }
  });

  it('refuses a foreign Origin (DNS rebinding) with 403, preflight included, and audits it', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const r = await postMcp(t, toolCall('get_me'), { token: w.key, headers: { origin: 'http://attacker.example' } });
    expect(r.status).toBe(403);
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
    expect(r.body.error).toMatchObject({ code: 'forbidden', details: { origin: 'http://attacker.example' } });
    const pre = await t.fetch('/mcp', preflight('http://attacker.example'));
    expect(pre.status).toBe(403);
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    const odd = await postMcp(t, toolCall('get_me'), { token: w.key, headers: { origin: 'null' } });
    expect(odd.status).toBe(403);
    const rows = (await listAudit(t.rt.services, {})).filter((a) => a.surface === 'mcp');
    expect(rows.map((a) => [a.method, a.statusCode, a.errorCode])).toEqual([
      ['POST', 403, 'forbidden'],
      ['OPTIONS', 403, 'forbidden'],
      ['POST', 403, 'forbidden'],
    ]);
  });

  it('refuses loopback origins when BASE_URL is public', async () => {
    await using t = await startTestServer({ env: { BASE_URL: 'https://svc.example.com' } });
    const r = await t.fetch('/mcp', preflight('http://localhost:6274'));
    expect(r.status).toBe(403);
    const ok = await t.fetch('/mcp', preflight('https://svc.example.com'));
    expect(ok.status).toBe(204);
  });
});
