// Every header name the surfaces, the webhook sender and the pages write or read, written once; a leaf (it imports
// nothing), so any layer may import it.

/** A header's name as Node hands it over in `req.headers`, typed as that literal (`content-type` reads as a string). */
const lower = <T extends string>(name: T) => name.toLowerCase() as Lowercase<T>;

/** The 60 s window's headers, in the order they are sent. */
export const RATE_LIMIT_HEADERS = [
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'RateLimit-Policy',
  'Svc-RateLimit-Scope',
] as const;
/** The monthly unit balance's headers, in the order they are sent. */
export const UNIT_HEADERS = [
  'Svc-Api-Units-Limit',
  'Svc-Api-Units-Remaining',
  'Svc-Api-Units-Used',
  'Svc-Api-Units-Cost',
  'Svc-Api-Units-Reset',
] as const;
export const RETRY_AFTER = 'Retry-After';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
export const REQUEST_ID_HEADER = 'X-Request-Id';
/** The request headers of a call, as written; Node hands them over in lower case (`*_IN`). */
export const API_KEY_HEADER = 'X-Api-Key';
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const WWW_AUTHENTICATE = 'WWW-Authenticate';
export const REQUEST_ID_IN = lower(REQUEST_ID_HEADER);
export const API_KEY_IN = lower(API_KEY_HEADER);
export const IDEMPOTENCY_KEY_IN = lower(IDEMPOTENCY_KEY_HEADER);

/**
 * The API's own response headers a browser client must be able to read (CORS `Access-Control-Expose-Headers`), in this
 * order.
 */
export const EXPOSED_API_HEADERS = [REQUEST_ID_HEADER, RETRY_AFTER, ...RATE_LIMIT_HEADERS, ...UNIT_HEADERS];

/** Standard HTTP headers the surfaces set or read, as written; Node hands request headers in lower case (`*_IN`). */
export const AUTHORIZATION_HEADER = 'Authorization';
export const ACCEPT_HEADER = 'Accept';
export const ORIGIN_HEADER = 'Origin';
export const VARY_HEADER = 'Vary';
export const ALLOW_HEADER = 'Allow';
export const CACHE_CONTROL_HEADER = 'Cache-Control';
export const CONTENT_TYPE_HEADER = 'Content-Type';
export const CONTENT_LENGTH_HEADER = 'Content-Length';
export const CONTENT_ENCODING_HEADER = 'Content-Encoding';
export const CONTENT_DISPOSITION_HEADER = 'Content-Disposition';
export const TRANSFER_ENCODING_HEADER = 'Transfer-Encoding';
export const CONNECTION_HEADER = 'Connection';
export const ETAG_HEADER = 'ETag';
export const DATE_HEADER = 'Date';
export const USER_AGENT_HEADER = 'User-Agent';
/** HTTP/1.0 caches' `no-cache`, which RFC 6749 §5.1 asks for beside `Cache-Control: no-store`. */
export const PRAGMA_HEADER = 'Pragma';
/** Lower-case forms for reading `req.headers` (and a client response's `headers`), computed once. */
export const AUTHORIZATION_IN = lower(AUTHORIZATION_HEADER);
export const CONTENT_TYPE_IN = lower(CONTENT_TYPE_HEADER);
export const CONTENT_LENGTH_IN = lower(CONTENT_LENGTH_HEADER);
export const CONTENT_ENCODING_IN = lower(CONTENT_ENCODING_HEADER);
export const TRANSFER_ENCODING_IN = lower(TRANSFER_ENCODING_HEADER);
export const CACHE_CONTROL_IN = lower(CACHE_CONTROL_HEADER);
export const CONNECTION_IN = lower(CONNECTION_HEADER);
export const ACCEPT_IN = lower(ACCEPT_HEADER);
export const ORIGIN_IN = lower(ORIGIN_HEADER);

/** Security headers (OWASP Secure Headers), as written. */
export const STRICT_TRANSPORT_SECURITY_HEADER = 'Strict-Transport-Security';
export const CONTENT_TYPE_OPTIONS_HEADER = 'X-Content-Type-Options';
export const FRAME_OPTIONS_HEADER = 'X-Frame-Options';
export const CONTENT_SECURITY_POLICY_HEADER = 'Content-Security-Policy';
export const REFERRER_POLICY_HEADER = 'Referrer-Policy';

/** A signed webhook delivery's own headers (docs/webhooks.md), as written. */
export const WEBHOOK_ID_HEADER = 'Svc-Webhook-Id';
export const WEBHOOK_DELIVERY_HEADER = 'Svc-Webhook-Delivery';
export const WEBHOOK_TIMESTAMP_HEADER = 'Svc-Webhook-Timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'Svc-Webhook-Signature';
export const WEBHOOK_TYPE_HEADER = 'Svc-Webhook-Type';
export const WEBHOOK_API_VERSION_HEADER = 'Svc-Webhook-Api-Version';
export const WEBHOOK_TEST_HEADER = 'Svc-Webhook-Test';
/** The agent run a connector invocation belongs to. */
export const AGENT_RUN_ID_HEADER = 'Svc-Agent-Run-Id';
/** The Standard Webhooks headers, which the standard spells in lower case. */
export const STANDARD_WEBHOOK_ID_HEADER = 'webhook-id';
export const STANDARD_WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
export const STANDARD_WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';
/** The legacy webhook headers, sent until their sunset, with that sunset announced (RFC 8594, RFC 9745). */
export const LEGACY_WEBHOOK_SIGNATURE_HEADER = 'X-Webhook-Signature';
export const LEGACY_WEBHOOK_EVENT_HEADER = 'X-Webhook-Event';
export const LEGACY_WEBHOOK_DELIVERY_ID_HEADER = 'X-Webhook-Delivery-Id';
export const SUNSET_HEADER = 'Sunset';
export const DEPRECATION_HEADER = 'Deprecation';
/** The MCP transport's request headers (Streamable HTTP), as written. */
export const MCP_PROTOCOL_VERSION_HEADER = 'Mcp-Protocol-Version';
export const MCP_METHOD_HEADER = 'Mcp-Method';
export const MCP_NAME_HEADER = 'Mcp-Name';
export const MCP_SESSION_ID_HEADER = 'Mcp-Session-Id';
export const LAST_EVENT_ID_HEADER = 'Last-Event-ID';
export const MCP_PROTOCOL_VERSION_IN = lower(MCP_PROTOCOL_VERSION_HEADER);
export const MCP_METHOD_IN = lower(MCP_METHOD_HEADER);
export const MCP_NAME_IN = lower(MCP_NAME_HEADER);
/** svc's MCP connection options: the toolsets and read-only selection (docs/mcp.md). */
export const MCP_TOOLSETS_HEADER = 'X-MCP-Toolsets';
export const MCP_READONLY_HEADER = 'X-MCP-Readonly';
/** Tells a buffering reverse proxy (nginx) to pass an SSE stream on as it is written. */
export const ACCEL_BUFFERING_HEADER = 'X-Accel-Buffering';

/** Each header of the two lists by name, for the modules that describe one of them (rest/openapi.ts). */
export const [RATE_LIMIT_LIMIT, RATE_LIMIT_REMAINING, RATE_LIMIT_RESET, RATE_LIMIT_POLICY, RATE_LIMIT_SCOPE] =
  RATE_LIMIT_HEADERS;
export const [UNITS_LIMIT, UNITS_REMAINING, UNITS_USED, UNITS_COST, UNITS_RESET] = UNIT_HEADERS;

/** The SSE client's resume point (EventSource sends it on reconnecting): `GET /v1/events/stream`. */
export const LAST_EVENT_ID_IN = lower(LAST_EVENT_ID_HEADER);
