import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createOriginPolicy } from '../../mcp/transport/originPolicy.js';
import { bearerChallenge } from '../../src/http/challenge.js';
import { buildToolCatalog, toolsFor } from '../../mcp/tools/toolCatalog.js';
import { toToolSchema } from '../../mcp/tools/toolSchema.js';
import { listProcedures } from '../../src/procedures/index.js';

describe('mcp units', () => {
  it('inlines $defs, drops $schema and types coerced numbers', () => {
    const Item = z.object({ id: z.string() }).meta({ id: 'UnitItem' });
    const schema = z.object({
      items: z.array(Item),
      one: Item,
      limit: z.coerce.number().int().min(1).optional(),
      ratio: z.coerce.number(),
    });
    const input = toToolSchema(schema, 'input')!;
    expect(JSON.stringify(input)).not.toMatch(/\$ref|\$defs|\$schema/);
    expect(input.properties).toMatchObject({
      items: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' } } } },
      limit: { type: 'integer', minimum: 1 },
      ratio: { type: 'number' },
    });
    expect(toToolSchema(z.array(z.string()), 'output')).toBeNull();
  });

  it('builds one tool per procedure and filters by scope', () => {
    const catalog = buildToolCatalog();
    expect(catalog.size).toBe(listProcedures().filter((p) => !p.meta.restOnly).length);
    expect(toolsFor(catalog, []).length).toBe(0);
    expect(
      toolsFor(catalog, ['events:read'])
        .map((t) => t.name)
        .sort(),
    ).toEqual(['list_event_types', 'list_events']);
    // completing an agent run is its own delegated token's: listed to that token only
    expect(toolsFor(catalog, ['mcp:tools']).map((t) => t.name)).toEqual([]);
    expect(toolsFor(catalog, ['mcp:tools'], 'run_01KAR3V6X5Q2Z8N4M7P9W1T3YB').map((t) => t.name)).toEqual([
      'complete_agent_run',
    ]);
    const dup = listProcedures().slice(0, 1);
    expect(() => buildToolCatalog([...dup, ...dup])).toThrow(/Duplicate/);
  });

  it('allows BASE_URL, configured and (for a loopback BASE_URL) loopback origins only', () => {
    const local = createOriginPolicy({
      baseUrl: 'http://localhost:3000',
      mcpAllowedOrigins: ['https://app.example.com'],
    });
    expect(
      [
        undefined,
        'http://localhost:3000',
        'https://app.example.com',
        'http://127.0.0.1:6274',
        'http://[::1]:8080',
        'http://foo.localhost:1',
      ].every(local),
    ).toBe(true);
    expect(
      ['https://evil.example', 'null', 'http://localhost.evil.example', 'file://', 'http://localhost:6274/path'].some(
        local,
      ),
    ).toBe(false);
    const pub = createOriginPolicy({ baseUrl: 'https://svc.example.com', mcpAllowedOrigins: [] });
    expect(pub('https://svc.example.com')).toBe(true);
    expect(pub('http://localhost:6274')).toBe(false);
  });

  it('writes challenges as RFC 6750 quoted strings', () => {
    expect(bearerChallenge({ resource_metadata: 'https://x/.well-known/oauth-protected-resource/mcp' })).toBe(
      'Bearer resource_metadata="https://x/.well-known/oauth-protected-resource/mcp"',
    );
    expect(bearerChallenge({ error: 'invalid_token', error_description: 'say "no"', scope: undefined })).toBe(
      'Bearer error="invalid_token", error_description="say \\"no\\""',
    );
  });
});
