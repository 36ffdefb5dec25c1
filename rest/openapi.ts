import { OpenAPIRegistry, OpenApiGeneratorV31, type ResponseConfig, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { ERROR_STATUS, type ErrorCode } from '../src/domain/errors.js';
import { SCOPE_DESCRIPTIONS } from '../src/domain/scopes.js';
import { listProcedures, type ProcedureInfo } from '../src/procedures/index.js';
import { ErrorEnvelope } from '../src/procedures/schemas.js';

const header = (description: string, example?: string) => ({ description, schema: { type: 'string' as const, ...(example ? { example } : {}) } });

/** Headers on every /v1 response (spec 8). */
const COMMON_HEADERS = {
  'X-Request-Id': header('Request identifier; equals error.requestId', 'req_01KAR3V6X5Q2Z8N4M7P9W1T3YB'),
  'RateLimit-Limit': header('Requests allowed in the current 60 s window', '600'),
  'RateLimit-Remaining': header('Requests left in the window', '599'),
  'RateLimit-Reset': header('Seconds until the window resets', '60'),
  'RateLimit-Policy': header('<limit>;w=<seconds>', '600;w=60'),
  'Svc-RateLimit-Scope': header('Subject the limit counts for: api_key, user, or ip when unauthenticated', 'api_key'),
  'Svc-Api-Units-Limit': header('Monthly unit allowance', '100000'),
  'Svc-Api-Units-Remaining': header('Units left this month', '99990'),
  'Svc-Api-Units-Used': header('Units used this month', '10'),
  'Svc-Api-Units-Cost': header('Units charged to this request', '1'),
  'Svc-Api-Units-Reset': header('ISO 8601 time (with offset) of the monthly reset', '2026-12-01T00:00:00+00:00'),
};

const ERROR_DESCRIPTIONS: Partial<Record<number, string>> = {
  400: 'Invalid input (validation_error)',
  401: 'Missing, invalid or revoked credential (unauthorized)',
  403: 'insufficient_scope (details.required, details.granted), invalid_audience or forbidden',
  404: 'not_found, or room_not_found for a direct-message room',
  405: 'method_not_allowed',
  408: 'request_timeout: the body did not arrive within SVC_BODY_TIMEOUT_MS; the connection is closed',
  409: 'Conflict: invalid_state, idempotency_key_in_use',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'idempotency_key_reused, or validation_error where the operation says so',
  429: 'rate_limited (with Retry-After) or api_units_exhausted',
  500: 'internal_error',
  503: 'service_unavailable: the database stayed busy; nothing was done, retry after Retry-After',
  507: 'insufficient_storage: no space left for the file; nothing was stored',
};

const errorExample = (code: ErrorCode) => ({
  error: {
    code, message: code === 'insufficient_scope' ? 'Missing scope: rooms:write' : 'See code', requestId: 'req_01KAR3V6X5Q2Z8N4M7P9W1T3YB',
    details: code === 'insufficient_scope' ? { required: ['rooms:write'], granted: ['rooms:read'] } : {},
  },
});

function errorResponses(proc: ProcedureInfo): Record<number, ResponseConfig> {
  const codes: (ErrorCode | { code: ErrorCode; status: number })[] = [
    'validation_error', 'unauthorized', 'insufficient_scope', 'rate_limited', 'api_units_exhausted', 'internal_error', 'service_unavailable',
  ];
  codes.push(...(proc.meta.errors ?? []));
  if (proc.meta.kind === 'write') codes.push('idempotency_key_in_use', 'idempotency_key_reused', 'unsupported_media_type', 'payload_too_large', 'request_timeout');
  const byStatus = new Map<number, ErrorCode>();
  for (const c of codes) {
    const { code, status } = typeof c === 'string' ? { code: c, status: ERROR_STATUS[c] } : c;
    if (!byStatus.has(status)) byStatus.set(status, code);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, code]) => [
      status,
      {
        description: ERROR_DESCRIPTIONS[status] ?? code,
        headers: status === 429 || status === 503 ? { ...COMMON_HEADERS, 'Retry-After': header('Seconds to wait before retrying', status === 429 ? '12' : '1') } : COMMON_HEADERS,
        content: { 'application/json': { schema: ErrorEnvelope, example: errorExample(code) } },
      },
    ]),
  );
}

function routeOf(proc: ProcedureInfo): RouteConfig {
  const { http } = proc.meta;
  const shape = proc.input.shape as Record<string, z.ZodType>;
  const pathKeys = [...http.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  const rest = Object.keys(shape).filter((k) => !pathKeys.includes(k));
  const pick = (keys: string[]) => z.object(Object.fromEntries(keys.map((k) => [k, shape[k]])));
  const request: RouteConfig['request'] = {};
  if (pathKeys.length) request.params = pick(pathKeys);
  if (http.rawBody) {
    const q = rest.filter((k) => k !== http.rawBody!.field && k !== http.rawBody!.contentTypeField && !http.rawBody!.mcpOnly?.includes(k));
    if (q.length) request.query = pick(q);
    request.body = {
      description: 'The file\'s bytes; Content-Type gives its media type',
      required: true,
      content: { 'application/octet-stream': { schema: z.string().meta({ format: 'binary' }) } },
    };
  } else if (http.method === 'GET') {
    if (rest.length) request.query = pick(rest);
  } else if (rest.length) {
    request.body = { required: rest.some((k) => !shape[k].safeParse(undefined).success), content: { 'application/json': { schema: pick(rest) } } };
  }
  if (proc.meta.kind === 'write') {
    request.headers = z.object({
      'Idempotency-Key': z.string().min(1).max(255).optional().meta({
        description: '1-255 printable characters; a retry with the same key and body replays the first response for 24 hours',
        example: '5f0c2a9e-4e0e-4a43-9f61-2d7c6f1d8b3a',
      }),
    });
  }
  const success: ResponseConfig = http.download
    ? { description: 'The file\'s bytes', headers: COMMON_HEADERS, content: { 'application/octet-stream': { schema: z.string().meta({ format: 'binary' }) } } }
    : { description: proc.meta.summary, headers: COMMON_HEADERS, content: { 'application/json': { schema: proc.output } } };
  const scope = proc.meta.scope!;
  return {
    method: http.method.toLowerCase() as 'get',
    path: http.path,
    operationId: proc.meta.tool.name,
    summary: proc.meta.summary,
    description: `${proc.meta.description}\n\nScope: \`${scope}\`. Cost: ${proc.meta.units} API unit(s). MCP tool: \`${proc.meta.tool.name}\`.`,
    tags: proc.meta.tags,
    security: [{ apiKey: [] }, { apiKeyHeader: [] }, { oauth2: [scope] }],
    request,
    responses: { [http.successStatus ?? 200]: success, ...errorResponses(proc) },
    'x-api-units': proc.meta.units,
    'x-scope': scope,
    'x-mcp-tool': proc.meta.tool.name,
  } as RouteConfig;
}

/** The OpenAPI 3.1 document, generated from the procedures' zod schemas and metadata. */
export function buildOpenApiDocument(baseUrl: string) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'apiKey', {
    type: 'http', scheme: 'bearer', description: 'API key `svc_live_…`/`svc_test_…` as a Bearer token (actor app)',
  });
  registry.registerComponent('securitySchemes', 'apiKeyHeader', {
    type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'API key in the X-Api-Key header',
  });
  registry.registerComponent('securitySchemes', 'oauth2', {
    type: 'oauth2',
    description: 'OAuth 2.1 authorization code with PKCE (S256); access tokens `svc_at_…` pinned to the resource ' + `${baseUrl}/v1`,
    flows: {
      authorizationCode: {
        authorizationUrl: `${baseUrl}/oauth/authorize`, tokenUrl: `${baseUrl}/oauth/token`, refreshUrl: `${baseUrl}/oauth/token`,
        scopes: { ...SCOPE_DESCRIPTIONS },
      },
    },
  });
  for (const proc of listProcedures()) registry.registerPath(routeOf(proc));
  const generator = new OpenApiGeneratorV31(registry.definitions);
  return generator.generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'svc public API', version: '1.0.0',
      description: 'Rooms, messages, tasks, meeting records with approvals, files and events. Every operation is also an MCP tool at /mcp.',
    },
    servers: [{ url: baseUrl }],
  });
}
