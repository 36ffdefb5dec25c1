import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { APPS_EXTENSION, VIEW_MIME_TYPE } from '../../mcp/apps/catalog.js';
import { registryServerJson, SERVER_CARD_PATH } from '../../mcp/discovery.js';
import { ALL_SCOPES, createWorld, issueKey, startTestServer } from '../helpers/harness.js';
import { ENVELOPE_2026, post2026 } from './mcpClient.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// the official registry's schema (its origin is in the file's $comment: no npm package ships it)
const schema = JSON.parse(fs.readFileSync(path.join(ROOT, 'test/fixtures/mcp-registry/server.schema.json'), 'utf8'));

function validator() {
  const ajv = new Ajv({ allErrors: true, strict: false });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  return ajv.compile(schema);
}

describe('discovery: server.json for the MCP registry and the server card', () => {
  it("the repository's server.json is the generated one and valid in the registry's schema", () => {
    const file = JSON.parse(fs.readFileSync(path.join(ROOT, 'server.json'), 'utf8'));
    // (regenerate: npx tsx scripts/server-json.ts > server.json)
    expect(file).toEqual(registryServerJson());
    const validate = validator();
    expect(validate(file), JSON.stringify(validate.errors)).toBe(true);
    expect(file.remotes[0]).toMatchObject({ type: 'streamable-http', url: 'https://{host}/mcp' });
    // the schema refuses what the registry refuses
    expect(validate({ ...file, name: 'svc' })).toBe(false);
    expect(validate({ ...file, remotes: [{ type: 'streamable-http', url: 'ftp://x/mcp' }] })).toBe(false);
  });

  it("writes an operator's own entry: its name and its deployment's /mcp, valid in the registry's schema", () => {
    const own = registryServerJson({ name: 'com.example/svc', baseUrl: 'https://svc.example.com/' });
    const validate = validator();
    expect(validate(own), JSON.stringify(validate.errors)).toBe(true);
    expect(own.name).toBe('com.example/svc');
    expect(own.remotes).toEqual([
      { type: 'streamable-http', url: 'https://svc.example.com/mcp', headers: registryServerJson().remotes[0].headers },
    ]);
    // a name outside the registry's namespace form is refused by its schema
    expect(validate(registryServerJson({ name: 'svc', baseUrl: 'https://svc.example.com' }))).toBe(false);
  });

  it('serves the server card from the same catalog and capabilities as /mcp, public and cacheable', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const res = await t.fetch(SERVER_CARD_PATH, { headers: { origin: 'https://elsewhere.example' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('cache-control')).toBe('public, max-age=3600');
    const card = (await res.json()) as any;
    // the card keeps server.json's shape (the draft makes it a subset), and names the same server
    const validate = validator();
    expect(validate(card), JSON.stringify(validate.errors)).toBe(true);
    const registry = registryServerJson();
    expect(card).toMatchObject({ name: registry.name, version: registry.version, description: registry.description });
    expect(card.remotes[0]).toMatchObject({
      type: 'streamable-http',
      url: `${t.baseUrl}/mcp`,
      supportedProtocolVersions: expect.arrayContaining(['2026-07-28', '2025-11-25']),
      authentication: { required: true, schemes: ['bearer', 'oauth2'] },
    });

    const discover = (await post2026(t, 'server/discover', {}, { token: w.key })).body.result;
    expect(card.capabilities).toEqual(discover.capabilities);
    expect(card.capabilities.extensions).toHaveProperty([APPS_EXTENSION]);
    expect(card.version).toBe(discover._meta['io.modelcontextprotocol/serverInfo'].version);
    // every tool a key with every scope lists (to a client of MCP Apps) is in the card as listed
    const key = (
      await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: [...ALL_SCOPES, 'agent:invoke'] })
    ).token;
    const apps = {
      _meta: {
        ...ENVELOPE_2026,
        'io.modelcontextprotocol/clientCapabilities': {
          extensions: { [APPS_EXTENSION]: { mimeTypes: [VIEW_MIME_TYPE] } },
        },
      },
    };
    const listed = (await post2026(t, 'tools/list', apps, { token: key })).body.result.tools as any[];
    const byName = new Map((card.tools as any[]).map((x) => [x.name, x]));
    for (const tool of listed) expect(byName.get(tool.name), tool.name).toEqual(tool);
    expect(card.resources.map((r: any) => r.mimeType)).toEqual([VIEW_MIME_TYPE, VIEW_MIME_TYPE, VIEW_MIME_TYPE]);
    // nothing of any caller: no credential was sent, and none is in it
    expect(JSON.stringify(card)).not.toContain(w.key);
  });
});
