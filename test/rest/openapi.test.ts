import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { listProcedures } from '../../src/procedures/index.js';
import { startTestServer } from '../helpers/harness.js';

describe('GET /v1/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document generated from the procedures', async () => {
    await using t = await startTestServer();
    const res = await t.fetch('/v1/openapi.json');
    expect(res.status).toBe(200);
    const doc = (await res.json()) as any;
    expect(doc.openapi).toMatch(/^3\.1\./);
    await SwaggerParser.validate(structuredClone(doc));
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['apiKey', 'apiKeyHeader', 'oauth2']);
    expect(doc.components.securitySchemes.oauth2.flows.authorizationCode.tokenUrl).toBe(`${t.baseUrl}/oauth/token`);
    for (const p of listProcedures()) {
      const op = doc.paths[p.meta.http.path]?.[p.meta.http.method.toLowerCase()];
      expect(op, `${p.meta.http.method} ${p.meta.http.path}`).toBeTruthy();
      expect(op.operationId).toBe(p.meta.tool.name);
      expect(op['x-api-units']).toBe(p.meta.units);
      expect(op.security).toEqual([{ apiKey: [] }, { apiKeyHeader: [] }, { oauth2: [p.meta.scope] }]);
      for (const status of ['400', '401', '403', '429']) {
        expect(op.responses[status]?.content['application/json'].schema.$ref, `${op.operationId} ${status}`).toBe('#/components/schemas/Error');
      }
      expect(op.responses[String(p.meta.http.successStatus ?? 200)].headers['Svc-Api-Units-Cost']).toBeTruthy();
      if (p.meta.kind === 'write') expect(op.parameters.some((x: any) => x.name === 'Idempotency-Key')).toBe(true);
    }
    const upload = doc.paths['/v1/rooms/{roomId}/files'].post;
    expect(Object.keys(upload.requestBody.content)).toEqual(['application/octet-stream']);
    expect(upload.parameters.map((x: any) => x.name)).toEqual(expect.arrayContaining(['roomId', 'filename', 'messageId', 'taskId']));
    // `text` stands for the body over MCP only; REST sends the bytes
    expect(upload.parameters.map((x: any) => x.name)).not.toContain('text');
    expect(doc.paths['/v1/rooms'].get.parameters.map((x: any) => x.name)).toEqual(['limit', 'cursor']);
  });

  it('serves a reference page at /docs', async () => {
    await using t = await startTestServer();
    const res = await t.fetch('/docs');
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('/v1/openapi.json');
    expect(html).toContain('/docs/standalone.js');
    expect((await t.fetch('/docs/standalone.js')).status).toBe(200);
  });
});
