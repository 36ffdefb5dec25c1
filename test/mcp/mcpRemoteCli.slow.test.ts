import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { listAudit } from '../../src/auth/audit.js';
import { createWorld, startTestServer } from '../helpers/harness.js';

// (slow tier by its name: it starts the bridge as a child process, as a desktop host does)
describe('mcp-remote, the stdio bridge for hosts that only start local servers', () => {
  it(
    'mcp-remote, the stdio bridge, lists the tools and calls one with an API key header',
    { timeout: 60_000 },
    async () => {
      await using t = await startTestServer();
      const w = await createWorld(t.rt);
      const bridge = path.join(
        path.dirname(createRequire(import.meta.url).resolve('mcp-remote/package.json')),
        'dist/proxy.js',
      );
      // its own state (OAuth, lock files) in a directory of the test's
      const home = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-mcp-remote-'));
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [bridge, `${t.baseUrl}/mcp`, '--header', `Authorization:Bearer ${w.key}`, '--allow-http'],
        env: { PATH: process.env.PATH ?? '', HOME: home, MCP_REMOTE_CONFIG_DIR: home },
        stderr: 'ignore',
      });
      const c = new ClientV1({ name: 'stdio-host', version: '1.0.0' });
      try {
        await c.connect(transport);
        expect((await c.listTools()).tools.map((x) => x.name)).toContain('get_me');
        expect((await c.callTool({ name: 'get_me', arguments: {} })).structuredContent).toMatchObject({
          id: w.owner.id,
        });
      } finally {
        await c.close();
        fs.rmSync(home, { recursive: true, force: true });
      }
      expect(
        (await listAudit(t.rt.services, {})).filter((r) => r.surface === 'mcp' && r.routePattern === 'get_me'),
      ).toHaveLength(1);
    },
  );
});
