import {
  OpenAPIRegistry,
  OpenApiGeneratorV31,
  type ResponseConfig,
  type RouteConfig,
} from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { ERROR_STATUS, type ErrorCode } from '../src/domain/errors.js';
import { SCOPE_DESCRIPTIONS, type Scope } from '../src/domain/scopes.js';
import { errorCodesOf } from '../src/procedures/errorCodes.js';
import { listProcedures, type ProcedureInfo } from '../src/procedures/index.js';
import { ErrorEnvelope } from '../src/http/envelope.js';
import {
  API_KEY_HEADER,
  CONTENT_DISPOSITION_HEADER,
  ETAG_HEADER,
  IDEMPOTENCY_KEY_HEADER,
  RATE_LIMIT_HEADERS,
  RATE_LIMIT_LIMIT,
  RATE_LIMIT_POLICY,
  RATE_LIMIT_REMAINING,
  RATE_LIMIT_RESET,
  RATE_LIMIT_SCOPE,
  REPLAYED_HEADER,
  REQUEST_ID_HEADER,
  RETRY_AFTER,
  UNITS_COST,
  UNITS_LIMIT,
  UNITS_REMAINING,
  UNITS_RESET,
  UNITS_USED,
  UNIT_HEADERS as UNIT_HEADER_NAMES,
  WWW_AUTHENTICATE,
} from '../src/http/headers.js';
import { restBindingOf } from './restBinding.js';

const header = (description: string, example: string, schema: object = { type: 'string' }) => ({
  description,
  schema: { ...schema, example },
});
const integerHeader = (description: string, example: string) =>
  header(description, example, { type: 'string', pattern: '^[0-9]+$' });

/** Headers of /v1 answers, once in `components.headers`; responses name them by reference. */
const HEADERS = {
  [REQUEST_ID_HEADER]: header(
    'Request identifier; equals error.requestId. A client may send its own.',
    'req_01KAR3V6X5Q2Z8N4M7P9W1T3YB',
  ),
  [RATE_LIMIT_LIMIT]: integerHeader('Requests allowed in the current 60 s window', '600'),
  [RATE_LIMIT_REMAINING]: integerHeader('Requests left in the window', '599'),
  [RATE_LIMIT_RESET]: integerHeader('Seconds until the window resets', '60'),
  [RATE_LIMIT_POLICY]: header('`<limit>;w=<seconds>`', '600;w=60'),
  [RATE_LIMIT_SCOPE]: header('Subject the limit counts for: api_key, user, or ip when unauthenticated', 'api_key', {
    type: 'string',
    enum: ['api_key', 'user', 'ip'],
  }),
  [UNITS_LIMIT]: integerHeader('Monthly unit allowance of the billing entity', '100000'),
  [UNITS_REMAINING]: integerHeader('Units left this month', '99990'),
  [UNITS_USED]: integerHeader('Units used this month', '10'),
  [UNITS_COST]: integerHeader('Units charged to this request (0 when refused or refunded)', '1'),
  [UNITS_RESET]: header('ISO 8601 time, with offset, of the monthly reset', '2026-12-01T00:00:00+00:00'),
  [RETRY_AFTER]: integerHeader('Seconds to wait before retrying (429 rate_limited, 503)', '12'),
  [WWW_AUTHENTICATE]: header(
    'Bearer challenge naming the protected-resource metadata (RFC 9728)',
    'Bearer realm="svc", resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/v1"',
  ),
  [REPLAYED_HEADER]: header(
    '`true` when the answer is the stored one of an earlier request with the same Idempotency-Key',
    'true',
    { type: 'string', enum: ['true'] },
  ),
};
type HeaderName = keyof typeof HEADERS;
const RATE_HEADERS: HeaderName[] = [REQUEST_ID_HEADER, ...RATE_LIMIT_HEADERS];
const UNIT_HEADERS: HeaderName[] = [...UNIT_HEADER_NAMES];
const refs = (names: HeaderName[]) => Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }]));

/** Headers of an error answer with this status: a 401 has no billing entity, so no unit headers. */
function errorHeaders(status: number) {
  if (status === 401) return refs([...RATE_HEADERS, WWW_AUTHENTICATE]);
  if (status === 429 || status === 503) return refs([...RATE_HEADERS, ...UNIT_HEADERS, RETRY_AFTER]);
  return refs([...RATE_HEADERS, ...UNIT_HEADERS]);
}

/** Meaning of each code, for the descriptions of the error responses. */
const CODE_MEANINGS: Record<ErrorCode, string> = {
  unauthorized: 'missing, invalid or revoked credential',
  insufficient_scope: "the credential lacks the operation's scope (details.required, details.granted)",
  invalid_audience: 'an OAuth token pinned to another surface (/mcp)',
  forbidden: 'the room does not let the caller do this (manage: its creator or an organization owner/admin)',
  not_found: "no such resource in the caller's organization or personal scope",
  room_not_found: 'a direct-message room',
  method_not_allowed: 'another method of this path',
  validation_error:
    'the input does not match the schema: a field, an unknown body field or query parameter, a NUL character, a malformed Idempotency-Key or cursor, a body that is not a UTF-8 JSON object (details.issues for schema failures)',
  rule_violation: "the input matches the schema but breaks a business rule stated in the operation's description",
  invalid_state: 'the resource is not in a state that allows this (an approval already pending, none pending…)',
  conflict: 'conflicting change',
  webhook_inactive: 'the webhook is deactivated',
  connector_inactive: 'the agent connector is deactivated',
  idempotency_key_in_use: 'a request with this Idempotency-Key is still running',
  payload_too_large: 'the body, or the file, is over the limit (details.maxBytes)',
  request_timeout: 'the body did not arrive within SVC_BODY_TIMEOUT_MS; the connection is closed',
  unsupported_media_type: 'a JSON body without Content-Type application/json',
  idempotency_key_reused: 'this Idempotency-Key was used with another body',
  rate_limited: 'the 60 s window is spent; retry after Retry-After',
  api_units_exhausted: "the billing entity's monthly units are spent (details.resetsAt)",
  internal_error: 'an unexpected failure; nothing is leaked',
  insufficient_storage: 'no space left for the file; nothing was stored',
  service_unavailable: 'the database stayed busy; nothing was done, retry after Retry-After',
};

/** The scopes of the `insufficient_scope` example (typed, so a renamed scope cannot linger here). */
const EXAMPLE_REQUIRED: Scope = 'rooms:write';
const EXAMPLE_GRANTED: Scope = 'rooms:read';

const pascal = (s: string) => s.replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase());

/**
 * A shared error response: one per status and set of codes (`NotFoundOrRoomNotFound`), the envelope with its
 * `code` narrowed to that set. Operations reference it.
 */
function errorResponseName(codes: ErrorCode[]) {
  return codes.map(pascal).join('Or');
}

function errorResponse(status: number, codes: ErrorCode[]) {
  const example = codes[0];
  return {
    description: codes.map((c) => `\`${c}\`: ${CODE_MEANINGS[c]}`).join('; '),
    headers: errorHeaders(status),
    content: {
      'application/json': {
        schema: {
          allOf: [
            { $ref: '#/components/schemas/ApiError' },
            {
              type: 'object' as const,
              properties: {
                error: { type: 'object' as const, properties: { code: { type: 'string' as const, enum: codes } } },
              },
            },
          ],
        },
        example: {
          error: {
            code: example,
            message:
              example === 'insufficient_scope'
                ? `Missing scope: ${EXAMPLE_REQUIRED}`
                : 'See the description of the code',
            requestId: 'req_01KAR3V6X5Q2Z8N4M7P9W1T3YB',
            details:
              example === 'insufficient_scope' ? { required: [EXAMPLE_REQUIRED], granted: [EXAMPLE_GRANTED] } : {},
          },
        },
      },
    },
  };
}

/** The tags of the document, with what each groups. */
const TAGS: { name: string; description: string }[] = [
  { name: 'me', description: 'The user and acting context behind the credential' },
  { name: 'organizations', description: 'The organization the credential acts in' },
  { name: 'rooms', description: 'Rooms and their members' },
  { name: 'messages', description: 'Messages of a room' },
  { name: 'tasks', description: 'Tasks of a room (with Gantt dates)' },
  { name: 'records', description: 'Meeting records and their approval flow' },
  { name: 'files', description: 'Files attached to messages and tasks: upload, metadata, download' },
  { name: 'events', description: 'The event catalog and the event log (the outbox behind webhooks)' },
  { name: 'webhooks', description: 'Webhooks of a room, their delivery history, redelivery and test events' },
  { name: 'search', description: 'Search across the messages and tasks of the rooms the caller can read' },
  {
    name: 'agents',
    description: "Agent runs: an organization's agent connector invoked for a room, as a delegate of the caller",
  },
];

const BINARY = { type: 'string', format: 'binary' } as const;

/** Schemas given a component name here, made once (zod keeps every named schema in its global registry). */
const NAMED = new Map<string, z.ZodType>();
const named = (id: string, make: () => z.ZodType) => {
  let schema = NAMED.get(id);
  if (!schema) NAMED.set(id, (schema = make().meta({ id })));
  return schema;
};

function routeOf(proc: ProcedureInfo, errorRefs: Map<string, number>): RouteConfig {
  const { http } = proc.meta;
  const name = pascal(proc.meta.tool.name);
  const shape = proc.input.shape as Record<string, z.ZodType>;
  const binding = restBindingOf(proc);
  const pick = (keys: string[]) => z.strictObject(Object.fromEntries(keys.map((k) => [k, shape[k]])));
  const request: RouteConfig['request'] = {};
  if (binding.path.length) request.params = pick(binding.path);
  if (binding.query.length) request.query = pick(binding.query);
  if (http.rawBody) {
    request.body = {
      description:
        "The file's bytes. Any media type: the Content-Type header is stored with the file and served back on download (application/octet-stream when absent).",
      required: true,
      content: { '*/*': { schema: BINARY } },
    };
  } else if (binding.body.length) {
    const schema = named(`${name}Request`, () => pick(binding.body));
    request.body = {
      required: binding.body.some((k) => !shape[k].safeParse(undefined).success),
      content: { 'application/json': { schema } },
    };
  }
  const outputName = (proc.output.meta() as { id?: string } | undefined)?.id;
  const output = outputName ? proc.output : named(`${name}Response`, () => proc.output);
  const success: ResponseConfig = http.download
    ? {
        description: "The file's bytes, with the media type stored at upload as Content-Type",
        headers: {
          ...refs([...RATE_HEADERS, ...UNIT_HEADERS]),
          [CONTENT_DISPOSITION_HEADER]: header(
            '`attachment` with the stored filename (RFC 6266, UTF-8)',
            "attachment; filename*=UTF-8''minutes.pdf",
          ),
          [ETAG_HEADER]: header(
            'The quoted SHA-256 of the bytes',
            '"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"',
          ),
        },
        content: { '*/*': { schema: BINARY } },
      }
    : http.stream
      ? {
          description:
            'Server-sent events: per event an `id:` line (the event id) and a `data:` line (the event object, as `GET /v1/events` lists it); comment lines keep the connection alive',
          headers: refs([...RATE_HEADERS, ...UNIT_HEADERS]),
          content: {
            'text/event-stream': {
              schema: {
                type: 'string',
                example:
                  'id: evt_3q2-7wEVjvXq0mFz7f4ZTA\ndata: {"id":"evt_3q2-7wEVjvXq0mFz7f4ZTA","type":"message.created",…}\n\n',
              },
            },
          },
        }
      : {
          description: proc.meta.summary,
          headers: refs([
            ...RATE_HEADERS,
            ...UNIT_HEADERS,
            ...(proc.meta.kind === 'write' ? ([REPLAYED_HEADER] as const) : []),
          ]),
          content: { 'application/json': { schema: output } },
        };
  const byStatus = errorCodesOf(proc.meta, 'rest');
  const errors = Object.fromEntries(
    Object.entries(byStatus).map(([status, codes]) => {
      const ref = errorResponseName(codes);
      errorRefs.set(ref, Number(status));
      return [status, { $ref: `#/components/responses/${ref}` }];
    }),
  );
  const scope = proc.meta.scope!;
  return {
    method: http.method.toLowerCase() as 'get',
    path: http.path,
    operationId: proc.meta.tool.name,
    summary: proc.meta.summary,
    description: `${proc.meta.description}\n\nScope: \`${scope}\`. Cost: ${proc.meta.units} API unit(s).${proc.meta.restOnly ? ' REST only.' : ` MCP tool: \`${proc.meta.tool.name}\`.`}`,
    tags: proc.meta.tags,
    security: [{ apiKey: [] }, { apiKeyHeader: [] }, { oauth2: [scope] }],
    ...(proc.meta.kind === 'write' ? { parameters: [{ $ref: '#/components/parameters/IdempotencyKey' }] } : {}),
    request,
    responses: { [http.successStatus ?? 200]: success, ...errors },
    'x-api-units': proc.meta.units,
    ...(proc.meta.restOnly ? {} : { 'x-mcp-tool': proc.meta.tool.name }),
  } as RouteConfig;
}

/** The OpenAPI 3.1 document, generated from the procedures' zod schemas and metadata. */
export function buildOpenApiDocument(baseUrl: string) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'apiKey', {
    type: 'http',
    scheme: 'bearer',
    description: 'API key `svc_live_…`/`svc_test_…` as a Bearer token (actor app)',
  });
  registry.registerComponent('securitySchemes', 'apiKeyHeader', {
    type: 'apiKey',
    in: 'header',
    name: API_KEY_HEADER,
    description: `API key in the ${API_KEY_HEADER} header`,
  });
  registry.registerComponent('securitySchemes', 'oauth2', {
    type: 'oauth2',
    description:
      'OAuth 2.1 authorization code with PKCE (S256); access tokens `svc_at_…` pinned to the resource ' +
      `${baseUrl}/v1`,
    flows: {
      authorizationCode: {
        authorizationUrl: `${baseUrl}/oauth/authorize`,
        tokenUrl: `${baseUrl}/oauth/token`,
        refreshUrl: `${baseUrl}/oauth/token`,
        scopes: { ...SCOPE_DESCRIPTIONS },
      },
    },
  });
  for (const [n, h] of Object.entries(HEADERS)) registry.registerComponent('headers', n, h);
  registry.registerComponent('parameters', 'IdempotencyKey', {
    name: IDEMPOTENCY_KEY_HEADER,
    in: 'header',
    required: false,
    description:
      '1-255 printable ASCII characters, not all spaces (HTTP trims a header value\'s ends); the quoted form `"key"` is accepted. A retry with the same key and body replays the first response for 24 hours; another body answers 422 idempotency_key_reused, a retry while the first runs 409 idempotency_key_in_use. Anything else: 400 validation_error.',
    schema: {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x20-\\x7e]*[\\x21-\\x7e][\\x20-\\x7e]*$',
      example: '5f0c2a9e-4e0e-4a43-9f61-2d7c6f1d8b3a',
    },
  });
  const errorRefs = new Map<string, number>();
  for (const proc of listProcedures()) registry.registerPath(routeOf(proc, errorRefs));
  for (const [ref, status] of [...errorRefs].sort(([, a], [, b]) => a - b)) {
    const codes = ref.split('Or').map((p) => (Object.keys(ERROR_STATUS) as ErrorCode[]).find((c) => pascal(c) === p)!);
    registry.registerComponent('responses', ref, errorResponse(status, codes));
  }
  // (ApiError is referenced by the shared error responses, which are plain objects, so it is added by hand)
  const generator = new OpenApiGeneratorV31([...registry.definitions, { type: 'schema', schema: ErrorEnvelope }]);
  const doc = generator.generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'svc public API',
      version: '1.0.0',
      description: [
        'Rooms, messages, tasks, meeting records with approvals, files and events. Every operation but the event stream is also an MCP tool at /mcp (`x-mcp-tool`).',
        '',
        '- **Strict input.** Unknown body fields and unknown query parameters are refused (400 `validation_error`), never ignored. No string may contain NUL (U+0000); JSON bodies are UTF-8 objects nested at most 32 levels.',
        '- **Errors** are `{ error: { code, message, requestId, details } }`. Each operation lists the codes it can answer per status in its responses (the MCP tool lists the same in `_meta["svc/errors"]`). `validation_error` means the input does not match the schema; `rule_violation` means it does but breaks a business rule stated in the operation\'s description.',
        '- **Lists** are `{ data, nextCursor }`; pass `nextCursor` unchanged as `cursor` for the next page.',
        `- **Writes** take an optional \`${IDEMPOTENCY_KEY_HEADER}\`. Each operation's cost in API units is \`x-api-units\`.`,
      ].join('\n'),
    },
    servers: [{ url: baseUrl }],
    tags: TAGS,
  });
  // a parameter's description is the parameter's; the copy zod-to-openapi also leaves in its schema only adds weight
  for (const item of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(item) as {
      parameters?: { description?: string; schema?: { description?: string } }[];
    }[]) {
      for (const p of op.parameters ?? [])
        if (p.schema && p.schema.description === p.description) delete p.schema.description;
    }
  }
  shareRepeatedParameters(
    doc as unknown as {
      paths?: Record<string, Record<string, { parameters?: unknown[] }>>;
      components?: { parameters?: Record<string, unknown> };
    },
  );
  return doc;
}

/**
 * A parameter spelled identically by several operations (`roomId` in the path, `limit`, `cursor`…) is written
 * once in `components.parameters` and referenced, as the headers and error responses are: generators then name
 * it once, and the document stays small.
 */
function shareRepeatedParameters(doc: {
  paths?: Record<string, Record<string, { parameters?: unknown[] }>>;
  components?: { parameters?: Record<string, unknown> };
}) {
  const ops = Object.values(doc.paths ?? {}).flatMap((item) => Object.values(item));
  const seen = new Map<string, number>();
  const keyOf = (p: unknown) => JSON.stringify(p);
  for (const op of ops)
    for (const p of op.parameters ?? [])
      if (!(p as { $ref?: string }).$ref) seen.set(keyOf(p), (seen.get(keyOf(p)) ?? 0) + 1);
  const names = new Map<string, string>();
  const components = ((doc.components ??= {}).parameters ??= {});
  for (const [key, count] of seen) {
    if (count < 2) continue;
    const { name, in: where } = JSON.parse(key) as { name: string; in: string };
    let id =
      `${name[0].toUpperCase()}${name.slice(1)}${where === 'path' ? '' : `${where[0].toUpperCase()}${where.slice(1)}`}`.replace(
        /[^A-Za-z0-9]/g,
        '',
      );
    for (let n = 2; id in components; n++) id = `${id.replace(/\d+$/, '')}${n}`;
    components[id] = JSON.parse(key);
    names.set(key, id);
  }
  for (const op of ops) {
    if (!op.parameters) continue;
    op.parameters = op.parameters.map((p) => {
      const id = names.get(keyOf(p));
      return id ? { $ref: `#/components/parameters/${id}` } : p;
    });
  }
}
