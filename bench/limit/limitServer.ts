// The limit of the same work (`npx tsx bench/limit/compare.ts`): a bare `node:http` server that does only what
// the spec requires of `GET /v1/me` and of a page of messages (`GET /v1/rooms/{roomId}/messages`), on the SQLite
// file svc uses, with better-sqlite3 and prepared statements, and answers the same bytes:
//
//   - the API key found by its hash, live (not revoked, its user still a member of its organization), its scope,
//     the billing entity; `lastUsedAt` kept to the minute as svc keeps it;
//   - the request counted in its 60 s window and the month's units charged: in memory by default (one process; the
//     units start from the database's balance), or with `LIMIT_COUNTS=db` committed in the same SQLite file, shared
//     with every other process, by svc's own statements (the window's upsert of src/fastpaths/sqliteRateLimiter.ts,
//     the conditional charge of db/stores/units.ts), written with the audit row in one commit per group;
//   - for a page: room access, the page query, the same JSON and cursor;
//   - the audit row written and committed before the answer (a group commit per turn of the event loop, as svc);
//   - the same status, headers (security, rate limit, units, request id) and body.
//
// Nothing else: no framework, no router, no schema library, no logger, no metrics, no background work. Run as its
// own process: `node --import tsx bench/limit/limitServer.ts` with svc's DATABASE_URL (sqlite:), PORT, BASE_URL,
// SVC_SECRET, SVC_RATE_LIMIT and SVC_MONTHLY_UNITS.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import Database from 'better-sqlite3';
import { newId } from '../../src/domain/ids.js';

const env = process.env;
const file = (env.DATABASE_URL ?? '').replace(/^sqlite:/, '');
if (!file || file === env.DATABASE_URL) throw new Error('limitServer: DATABASE_URL must be sqlite:<file>');
const port = Number(env.PORT);
const baseUrl = (env.BASE_URL ?? `http://127.0.0.1:${port}`).replace(/\/$/, '');
const secret = env.SVC_SECRET ?? '';
const rateLimit = Number(env.SVC_RATE_LIMIT ?? 600);
const monthlyUnits = Number(env.SVC_MONTHLY_UNITS ?? 100_000);
const WINDOW_MS = 60_000;
/** `db`: the window and the units committed in the database as svc must keep them; otherwise in memory. */
const countsInDb = env.LIMIT_COUNTS === 'db';

const db = new Database(file, { timeout: 10_000 });
// svc's connection settings (db/dataSource.ts)
db.pragma('journal_mode = WAL');
db.pragma('busy_timeout = 10000');
db.pragma('foreign_keys = ON');
db.pragma('synchronous = NORMAL');
db.pragma('wal_autocheckpoint = 10000');
db.pragma('cache_size = -8000');

interface KeyRow {
  id: string;
  userId: string;
  organizationId: string | null;
  scopes: string;
  tokenHash: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
  email: string | null;
  name: string;
  locale: string;
  createdAt: string;
  member: string | null;
}
// svc's own statements and their forms (db/sql.ts): `= +?` and `LIMIT CAST(? AS INTEGER)`, which SQLite does not
// compile again for each new value bound; scalar subqueries rather than a join (src/auth/authenticate.ts)
const userColumn = (column: string) => `(SELECT u."${column}" FROM "users" u WHERE u."id" = k."userId") AS "${column}"`;
const keyLookup = db.prepare<[string], KeyRow>(
  'SELECT k."id", k."userId", k."organizationId", k."scopes", k."tokenHash", k."revokedAt", k."lastUsedAt", ' +
    `${['email', 'name', 'locale', 'createdAt'].map(userColumn).join(', ')}, ` +
    '(SELECT m."id" FROM "memberships" m WHERE m."userId" = k."userId" AND m."organizationId" = k."organizationId") ' +
    'AS "member" FROM "api_keys" k WHERE k."tokenHash" = +?',
);
const touchKey = db.prepare(
  'UPDATE "api_keys" SET "lastUsedAt" = +? WHERE "id" = +? AND ("lastUsedAt" IS NULL OR "lastUsedAt" <= ?)',
);
const unitsRow = db.prepare<[string, string], { used: number }>(
  'SELECT "used" FROM "unit_usage" WHERE "billingEntity" = +? AND "period" = +?',
);
interface RoomRow {
  organizationId: string | null;
  roomType: number;
  role: string | null;
  member: number;
}
const roomAccess = db.prepare<[string, string, string], RoomRow>(
  'SELECT r."organizationId", r."roomType", ' +
    '(SELECT ms."role" FROM "memberships" ms WHERE ms."userId" = +? AND ms."organizationId" = r."organizationId") AS "role", ' +
    '(SELECT COUNT(*) FROM "room_members" rm WHERE rm."roomId" = r."id" AND rm."userId" = +?) AS "member" ' +
    'FROM "rooms" r WHERE r."id" = +?',
);
interface MessageRow {
  id: string;
  roomId: string;
  authorId: string;
  postedBy: string;
  body: string;
  createdAt: string;
  agentRunId: string | null;
}
const COLUMNS = '"id", "roomId", "authorId", "postedBy", "body", "createdAt", "agentRunId"';
const firstPage = db.prepare<[string, number], MessageRow>(
  `SELECT ${COLUMNS} FROM "messages" WHERE "roomId" = +? ORDER BY "id" ASC LIMIT CAST(? AS INTEGER)`,
);
const pageAfter = db.prepare<[string, string, number], MessageRow>(
  `SELECT ${COLUMNS} FROM "messages" WHERE "roomId" = +? AND "id" > ? ORDER BY "id" ASC LIMIT CAST(? AS INTEGER)`,
);
const auditInsert = db.prepare(
  'INSERT INTO "audit_log" ("id", "requestId", "surface", "method", "routePattern", "statusCode", "authMethod", ' +
    '"actor", "delegatingUserId", "scopes", "organizationId", "userId", "apiKeyId", "tokenId", "units", "errorCode", ' +
    '"createdAt", "agentRunId") VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, NULL, ?, ?, ?, NULL)',
);

// svc's statements for the window and the units (LIMIT_COUNTS=db), in the form db/sql.ts prepares them
const windowUpsert = db.prepare<unknown[], { points: number; expire: number | null }>(
  'INSERT INTO "rate_limits" ("key", "points", "expire") VALUES (?, ?, ?) ON CONFLICT("key") DO UPDATE SET ' +
    '"points" = CASE WHEN "expire" IS NULL OR "expire" > ? THEN "points" + excluded."points" ELSE excluded."points" END, ' +
    '"expire" = CASE WHEN "expire" IS NULL OR "expire" > ? THEN "expire" ELSE excluded."expire" END ' +
    'RETURNING "points", "expire"',
);
const chargeIfCounted = db.prepare<unknown[], { used: number }>(
  'INSERT INTO "unit_usage" ("billingEntity", "period", "used") SELECT ?, ?, ? ' +
    'WHERE (SELECT "points" FROM "rate_limits" WHERE "key" = +?) <= ? ' +
    'ON CONFLICT ("billingEntity", "period") DO UPDATE SET "used" = "unit_usage"."used" + excluded."used" ' +
    'WHERE "unit_usage"."used" + excluded."used" <= ? RETURNING "used"',
);

const begin = db.prepare('BEGIN IMMEDIATE');
const commit = db.prepare('COMMIT');
const rollback = db.prepare('ROLLBACK');

/**
 * Group commit, as svc does it (db/sql.ts): the work of one turn of the event loop (the audit rows; with
 * LIMIT_COUNTS=db the window, the units and the answer too) runs in one transaction at the next turn, and each
 * answer goes out only after that commit.
 */
let pending: (() => void)[] = [];
/** Inside a group's transaction: the answers to send once it commits. */
let committing: (() => void)[] | null = null;
function flush(): void {
  const group = pending;
  pending = [];
  const sends: (() => void)[] = (committing = []);
  const own = group.length > 1 || countsInDb;
  if (own) begin.run();
  try {
    for (const work of group) work();
    if (own) commit.run();
  } catch (err) {
    if (db.inTransaction) rollback.run();
    throw err;
  } finally {
    committing = null;
  }
  for (const send of sends) send();
}
function inGroup(work: () => void): void {
  if (!pending.length) setImmediate(flush);
  pending.push(work);
}
function writeAudit(values: unknown[], then: () => void): void {
  if (committing) {
    auditInsert.run(...values);
    committing.push(then);
  } else
    inGroup(() => {
      auditInsert.run(...values);
      committing!.push(then);
    });
}

/** The values of `auditInsert` for one answer. */
const auditValues = (
  requestId: string,
  surface: 'rest' | 'mcp',
  method: string,
  route: string,
  status: number,
  a: Actor | null,
  units: number,
  errorCode: string | null,
) => [
  newId('aud', Date.now()),
  requestId,
  surface,
  method,
  route,
  status,
  a ? 'api_key' : null,
  a ? 'app' : null,
  a ? a.scopesText : '[]',
  a?.organizationId ?? null,
  a?.userId ?? null,
  a?.keyId ?? null,
  units,
  errorCode,
  new Date().toISOString(),
];

/** `GET /v1/me`'s body, also `get_me`'s output. */
const meJson = (actor: Actor): string =>
  JSON.stringify({
    id: actor.userId,
    email: actor.row.email,
    name: actor.row.name,
    locale: actor.row.locale,
    organizationId: actor.organizationId,
    billingContext: actor.organizationId ? 'organization' : 'individual',
    createdAt: actor.row.createdAt,
  });

const SECURITY: Record<string, string> = {
  'Strict-Transport-Security': 'max-age=31536000; includeSubDomains',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'Referrer-Policy': 'no-referrer',
};
const CHALLENGE = `Bearer realm="svc", resource_metadata="${baseUrl}/.well-known/oauth-protected-resource/v1"`;

/** The 60 s windows, as rate-limiter-flexible counts them: a window starts with its first request. */
const windows = new Map<string, { points: number; expire: number }>();
/** The month's units per billing entity and period, read once from the database. */
const units = new Map<string, number>();

interface Actor {
  keyId: string;
  userId: string;
  organizationId: string | null;
  billingEntity: string;
  scopes: string[];
  scopesText: string;
  row: KeyRow;
}

/** What the answer carries: the window, the balance, the units charged. */
interface Outcome {
  headers: Record<string, string>;
  units: number;
}

function count(subject: string, now: number, out: Outcome): boolean {
  if (countsInDb) return countInDb(subject, now, out);
  let w = windows.get(subject);
  if (!w || w.expire <= now) windows.set(subject, (w = { points: 0, expire: now + WINDOW_MS }));
  w.points++;
  const h = out.headers;
  h['RateLimit-Limit'] = String(rateLimit);
  h['RateLimit-Remaining'] = String(Math.max(rateLimit - w.points, 0));
  h['RateLimit-Reset'] = String(Math.max(1, Math.ceil((w.expire - now) / 1000)));
  h['RateLimit-Policy'] = `${rateLimit};w=60`;
  h['Svc-RateLimit-Scope'] = subject.startsWith('ip:') ? 'ip' : 'api_key';
  return w.points <= rateLimit;
}

/** rate-limiter-flexible's key of a subject's window, as svc writes it. */
const windowKey = (subject: string) => `rl${rateLimit}:${subject}`;

/** The window counted in the database: svc's upsert and its answer (src/fastpaths/sqliteRateLimiter.ts). */
function countInDb(subject: string, now: number, out: Outcome): boolean {
  const { points, expire } = windowUpsert.get(windowKey(subject), 1, now + WINDOW_MS, now, now)!;
  const msBeforeNext = expire ? Math.max(Number(expire) - now, 0) : -1;
  const allowed = points <= rateLimit;
  const h = out.headers;
  h['RateLimit-Limit'] = String(rateLimit);
  h['RateLimit-Remaining'] = String(allowed ? Math.max(rateLimit - points, 0) : 0);
  const reset = Math.ceil(msBeforeNext / 1000);
  h['RateLimit-Reset'] = String(allowed ? reset : Math.max(1, reset));
  h['RateLimit-Policy'] = `${rateLimit};w=60`;
  h['Svc-RateLimit-Scope'] = subject.startsWith('ip:') ? 'ip' : 'api_key';
  return allowed;
}

/**
 * Charges `cost` units (0: reads the balance); false when the month's units are spent. In the database, the
 * charge holds only while the window counted just before allows it, as svc's count and charge in one commit.
 */
function charge(actor: Actor, d: Date, cost: number, out: Outcome): boolean {
  const iso = d.toISOString();
  const period = iso.slice(0, 7);
  let used: number;
  let ok: boolean;
  if (countsInDb) {
    const charged =
      cost > 0 && cost <= monthlyUnits
        ? chargeIfCounted.get(
            actor.billingEntity,
            period,
            cost,
            windowKey(`key:${actor.keyId}`),
            rateLimit,
            monthlyUnits,
          )
        : undefined;
    ok = cost === 0 || charged !== undefined;
    used = charged?.used ?? unitsRow.get(actor.billingEntity, period)?.used ?? 0;
  } else {
    const k = `${actor.billingEntity} ${period}`;
    used = units.get(k) ?? unitsRow.get(actor.billingEntity, period)?.used ?? 0;
    ok = cost === 0 || used + cost <= monthlyUnits;
    if (cost > 0 && ok) used += cost;
    units.set(k, used);
  }
  const h = out.headers;
  h['Svc-Api-Units-Limit'] = String(monthlyUnits);
  h['Svc-Api-Units-Remaining'] = String(Math.max(0, monthlyUnits - used));
  h['Svc-Api-Units-Used'] = String(used);
  h['Svc-Api-Units-Cost'] = String(ok ? cost : 0);
  const next = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString();
  h['Svc-Api-Units-Reset'] = `${next.slice(0, 19)}+00:00`;
  if (ok) out.units = cost;
  return ok;
}

function authenticate(req: http.IncomingMessage, now: Date): Actor | null | 'malformed' {
  const authorization = req.headers.authorization;
  let token: string | null = null;
  if (authorization !== undefined) token = /^Bearer[ ]+([^\s]+)\s*$/i.exec(authorization)?.[1] ?? null;
  else if (typeof req.headers['x-api-key'] === 'string') token = req.headers['x-api-key'].trim() || null;
  if (!token) return 'malformed';
  if (!(token.startsWith('svc_live_') || token.startsWith('svc_test_'))) return null;
  const hash = createHash('sha256').update(token).digest('hex');
  const row = keyLookup.get(hash);
  if (!row || !timingSafeEqual(Buffer.from(row.tokenHash), Buffer.from(hash)) || row.revokedAt || row.email === null)
    return null;
  if (row.organizationId && !row.member) return null;
  const staleBefore = new Date(now.getTime() - 60_000).toISOString();
  if (!row.lastUsedAt || row.lastUsedAt <= staleBefore) touchKey.run(now.toISOString(), row.id, staleBefore);
  return {
    keyId: row.id,
    userId: row.userId,
    organizationId: row.organizationId,
    billingEntity: row.organizationId ? `org:${row.organizationId}` : `user:${row.userId}`,
    scopes: JSON.parse(row.scopes) as string[],
    scopesText: row.scopes,
    row,
  };
}

function send(res: http.ServerResponse, status: number, text: string, out: Outcome, requestId: string): void {
  const h: Record<string, string> = {};
  for (const k in SECURITY) h[k] = SECURITY[k];
  for (const k in out.headers) h[k] = out.headers[k];
  h['X-Request-Id'] = requestId;
  h['Cache-Control'] = 'no-store';
  h['Content-Type'] = 'application/json; charset=utf-8';
  h['Content-Length'] = String(Buffer.byteLength(text));
  res.writeHead(status, h);
  res.end(text);
}

const envelope = (code: string, message: string, requestId: string, details: unknown = {}) =>
  JSON.stringify({ error: { code, message, requestId, details } });

const cursorOf = (key: string) => {
  const body = Buffer.from(JSON.stringify({ k: key })).toString('base64url');
  return `${body}.${createHmac('sha256', secret).update(`cursor:${body}`).digest('hex').slice(0, 22)}`;
};

function keyOfCursor(cursor: string): string | null {
  const [body, sig, extra] = cursor.split('.');
  if (!body || !sig || extra !== undefined) return null;
  const want = createHmac('sha256', secret).update(`cursor:${body}`).digest('hex').slice(0, 22);
  if (sig.length !== want.length || !timingSafeEqual(Buffer.from(sig), Buffer.from(want))) return null;
  try {
    const parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { k?: unknown; o?: unknown };
    return typeof parsed.k === 'string' && parsed.o === undefined ? parsed.k : null;
  } catch {
    return null;
  }
}

const requestIdOf = (req: http.IncomingMessage) => {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : newId('req');
};

const ROOM_ID = /^room_[0-9A-Za-z]{1,64}$/;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const ME = '/v1/me';
const MCP = '/mcp';
const MESSAGES = '/v1/rooms/{roomId}/messages';

/** The page's answer, or the refusal's status, code and message; `null` when the room is not readable. */
function page(actor: Actor, roomId: string, query: URLSearchParams): { status: number; text: string } {
  const notFound = { status: 404, text: '' };
  if (!ROOM_ID.test(roomId)) return notFound;
  const limitText = query.get('limit');
  const limit = limitText === null ? 50 : Number(limitText);
  const cursor = query.get('cursor');
  const room = roomAccess.get(actor.userId, actor.userId, roomId);
  if (!room || room.organizationId !== actor.organizationId) return notFound;
  if ((room.organizationId && !room.role) || room.roomType === 1) return notFound;
  if (room.member === 0 && room.role !== 'owner' && room.role !== 'admin') return notFound;
  const after = cursor ? keyOfCursor(cursor) : null;
  const rows = after ? pageAfter.all(roomId, after, limit + 1) : firstPage.all(roomId, limit + 1);
  const more = rows.length > limit;
  if (more) rows.length = limit;
  let text = '{"data":[';
  for (let i = 0; i < rows.length; i++) {
    const m = rows[i];
    if (i) text += ',';
    text += JSON.stringify({
      id: m.id,
      roomId: m.roomId,
      authorId: m.authorId,
      postedBy: m.postedBy,
      body: m.body,
      createdAt: m.createdAt,
      agentRunId: m.agentRunId ?? null,
    });
  }
  text += `],"nextCursor":${more ? JSON.stringify(cursorOf(rows[rows.length - 1].id)) : 'null'}}`;
  return { status: 200, text };
}

function handle(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = req.url ?? '/';
  if (url === '/healthz') {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('{"status":"ok"}');
    return;
  }
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (path === MCP) return readMcp(req, res);
  const parts = path.split('/');
  const isMe = path === ME;
  const isPage = parts.length === 5 && parts[1] === 'v1' && parts[2] === 'rooms' && parts[4] === 'messages';
  if (req.method !== 'GET' || (!isMe && !isPage)) {
    res.writeHead(404, { 'Content-Type': 'application/json' });
    res.end('{"error":"not part of the limit"}');
    return;
  }
  const requestId = requestIdOf(req);
  const now = new Date();
  const ms = now.getTime();
  const route = isMe ? ME : MESSAGES;
  const out: Outcome = { headers: {}, units: 0 };
  const answer = (status: number, a: Actor | null, errorCode: string | null, text: string) =>
    writeAudit(auditValues(requestId, 'rest', 'GET', route, status, a, out.units, errorCode), () =>
      send(res, status, text, out, requestId),
    );
  const refuse = (status: number, a: Actor | null, code: string, message: string, details?: unknown) =>
    answer(status, a, code, envelope(code, message, requestId, details));

  const actor = authenticate(req, now);
  // with the counts in the database, the rest runs inside the next group's transaction
  const decide = () => {
    if (!actor || actor === 'malformed') {
      if (!count(`ip:${req.socket.remoteAddress ?? ''}`, ms, out)) return refuseRate(refuse, out, null);
      out.headers['WWW-Authenticate'] = CHALLENGE;
      const message = actor ? 'Missing or malformed credential' : 'Missing, invalid or revoked credential';
      return refuse(401, null, 'unauthorized', message);
    }
    const scope = isMe ? 'me:read' : 'messages:read';
    const allowed = actor.scopes.includes(scope);
    if (!count(`key:${actor.keyId}`, ms, out)) {
      charge(actor, now, 0, out);
      return refuseRate(refuse, out, actor);
    }
    if (!allowed) {
      charge(actor, now, 0, out);
      return refuse(403, actor, 'insufficient_scope', `Missing scope: ${scope}`, {
        required: [scope],
        granted: actor.scopes,
      });
    }
    if (!charge(actor, now, 1, out)) {
      return refuse(429, actor, 'api_units_exhausted', 'Monthly API units are exhausted', {
        limit: monthlyUnits,
        used: Number(out.headers['Svc-Api-Units-Used']),
        cost: 1,
        resetsAt: out.headers['Svc-Api-Units-Reset'],
      });
    }
    if (isMe) {
      return answer(200, actor, null, meJson(actor));
    }
    const p = page(actor, decodeURIComponent(parts[3]), new URLSearchParams(q < 0 ? '' : url.slice(q + 1)));
    if (p.status === 404) return refuse(404, actor, 'not_found', 'Room not found');
    answer(200, actor, null, p.text);
  };
  if (countsInDb) inGroup(decide);
  else decide();
}

function refuseRate(
  refuse: (status: number, a: Actor | null, code: string, message: string, details?: unknown) => void,
  out: Outcome,
  actor: Actor | null,
): void {
  const retryAfter = Number(out.headers['RateLimit-Reset']);
  out.headers['Retry-After'] = String(retryAfter);
  refuse(429, actor, 'rate_limited', 'Rate limit exceeded; retry after the window resets', {
    retryAfterSeconds: retryAfter,
  });
}

// MCP `tools/call get_me` over Streamable HTTP, stateless, on both revisions (what bench/httpScenarios.ts sends):
// the credential and `mcp:tools` at the door, the bounded JSON body, the JSON-RPC request checked against its
// revision's headers (Accept, MCP-Protocol-Version; on 2026-07-28 Mcp-Method, Mcp-Name and the `_meta` envelope),
// the tool's scope, then the window, the units and the audit row as for REST, and svc's JSON-RPC answer. What svc
// answers otherwise (a batch, another tool, a refusal inside the call …) is not part of the limit.
const MCP_BODY_LIMIT = 1024 * 1024;
const MCP_SCOPE = 'mcp:tools';
/**
 * svc's 401 challenge scope on /mcp: `mcp:tools` and every scope a tool needs, in its catalog's order
 * (mcp/transport/door.ts). A constant here, as a bare server would hold it; compare.ts's check finds any drift.
 */
const MCP_CHALLENGE_SCOPE =
  'mcp:tools me:read organizations:read rooms:read rooms:write messages:read messages:write tasks:read tasks:write ' +
  'records:read records:write files:read files:write events:read webhooks:read webhooks:write agent:invoke';
const MCP_RESOURCE_METADATA = `${baseUrl}/.well-known/oauth-protected-resource/mcp`;
const LEGACY_REVISIONS = new Set(['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07']);
const MODERN_REVISION = '2026-07-28';
const SERVER_INFO_JSON = JSON.stringify({ name: 'svc', title: 'svc collaboration service', version: '0.1.0' });
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function notPartOfTheLimit(res: http.ServerResponse): void {
  res.writeHead(404, { 'Content-Type': 'application/json' });
  res.end('{"error":"not part of the limit"}');
}

function readMcp(req: http.IncomingMessage, res: http.ServerResponse): void {
  if (req.method !== 'POST' || req.headers.origin !== undefined) {
    req.resume();
    return notPartOfTheLimit(res);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (c: Buffer) => {
    size += c.length;
    if (size <= MCP_BODY_LIMIT) chunks.push(c);
  });
  req.on('end', () => {
    if (size > MCP_BODY_LIMIT) return notPartOfTheLimit(res);
    mcpCall(req, res, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
  });
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The request id of a `tools/call get_me` this limit answers, with its revision; null for anything else. */
function getMeCall(req: http.IncomingMessage, bytes: Buffer): { id: string | number; modern: boolean } | null {
  const h = req.headers;
  const accept = h.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return null;
  if ((h['content-type'] ?? '').split(';')[0].trim().toLowerCase() !== 'application/json') return null;
  let body: unknown;
  try {
    body = JSON.parse(UTF8.decode(bytes));
  } catch {
    return null;
  }
  if (!isPlainObject(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/call') return null;
  const id = body.id;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return null;
  for (const k in body) if (k !== 'jsonrpc' && k !== 'id' && k !== 'method' && k !== 'params') return null;
  const params = body.params;
  if (!isPlainObject(params) || params.name !== 'get_me') return null;
  for (const k in params) if (k !== 'name' && k !== 'arguments' && k !== '_meta') return null;
  const args = params.arguments;
  if (args !== undefined && (!isPlainObject(args) || Object.keys(args).length)) return null; // get_me takes none
  const version = h['mcp-protocol-version'];
  if (version === MODERN_REVISION) {
    const meta = params._meta;
    if (h['mcp-method'] !== 'tools/call' || h['mcp-name'] !== 'get_me' || !isPlainObject(meta)) return null;
    const info = meta['io.modelcontextprotocol/clientInfo'];
    if (
      meta['io.modelcontextprotocol/protocolVersion'] !== MODERN_REVISION ||
      !isPlainObject(meta['io.modelcontextprotocol/clientCapabilities']) ||
      !isPlainObject(info) ||
      typeof info.name !== 'string' ||
      typeof info.version !== 'string'
    )
      return null;
    return { id: id as string | number, modern: true };
  }
  if (params._meta !== undefined || (version !== undefined && !LEGACY_REVISIONS.has(String(version)))) return null;
  return { id: id as string | number, modern: false };
}

/** A refusal at /mcp's door (credential, `mcp:tools`): svc's envelope, its challenge and its header order. */
function sendDoorRefusal(res: http.ServerResponse, status: number, challenge: string, text: string, requestId: string) {
  const h: Record<string, string> = {
    'WWW-Authenticate': challenge,
    'X-Request-Id': requestId,
    'Cache-Control': 'no-store',
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(text)),
  };
  for (const k in SECURITY) h[k] = SECURITY[k];
  h.Vary = 'Origin';
  res.writeHead(status, h);
  res.end(text);
}

function mcpCall(req: http.IncomingMessage, res: http.ServerResponse, bytes: Buffer): void {
  const requestId = requestIdOf(req);
  const now = new Date();
  const ms = now.getTime();
  const out: Outcome = { headers: {}, units: 0 };
  const actor = authenticate(req, now);
  const audit = (a: Actor | null, method: string, route: string, status: number, code: string | null) =>
    auditValues(requestId, 'mcp', method, route, status, a, out.units, code);
  const refuseAtDoor = (
    status: number,
    a: Actor | null,
    code: string,
    message: string,
    challenge: string,
    details = {},
  ) =>
    writeAudit(audit(a, 'POST', MCP, status, code), () =>
      sendDoorRefusal(res, status, challenge, envelope(code, message, requestId, details), requestId),
    );
  const decide = () => {
    if (!actor || actor === 'malformed') {
      // a refused credential counts against the address's window (no rate-limit headers on the refusal)
      if (!count(`ip:${req.socket.remoteAddress ?? ''}`, ms, { headers: {}, units: 0 })) return notPartOfTheLimit(res);
      const message = actor ? 'Missing or malformed credential' : 'Missing, invalid or revoked credential';
      const presented = actor ? '' : `, error="invalid_token", error_description="${message}"`;
      const challenge = `Bearer resource_metadata="${MCP_RESOURCE_METADATA}", scope="${MCP_CHALLENGE_SCOPE}"${presented}`;
      return refuseAtDoor(401, null, 'unauthorized', message, challenge);
    }
    if (!actor.scopes.includes(MCP_SCOPE)) {
      const challenge =
        `Bearer error="insufficient_scope", scope="${MCP_SCOPE}", resource_metadata="${MCP_RESOURCE_METADATA}", ` +
        `error_description="Missing scope: ${MCP_SCOPE}"`;
      return refuseAtDoor(403, actor, 'insufficient_scope', `Missing scope: ${MCP_SCOPE}`, challenge, {
        required: [MCP_SCOPE],
        granted: actor.scopes,
      });
    }
    const call = getMeCall(req, bytes);
    if (!call || !actor.scopes.includes('me:read')) return notPartOfTheLimit(res);
    if (!count(`key:${actor.keyId}`, ms, out) || !charge(actor, now, 1, out)) return notPartOfTheLimit(res);
    const me = meJson(actor);
    const meta = `{"svc/requestId":${JSON.stringify(requestId)}${
      call.modern ? `,"io.modelcontextprotocol/serverInfo":${SERVER_INFO_JSON}` : ''
    }}`;
    const text =
      `{"result":{"_meta":${meta},"content":[{"type":"text","text":${JSON.stringify(me)}}],"structuredContent":${me}` +
      `${call.modern ? ',"resultType":"complete"' : ''}},"jsonrpc":"2.0","id":${JSON.stringify(call.id)}}`;
    writeAudit(audit(actor, 'TOOL', 'get_me', 200, null), () => {
      const h: Record<string, string> = {};
      for (const k in SECURITY) h[k] = SECURITY[k];
      h.Vary = 'Origin';
      h['X-Request-Id'] = requestId;
      for (const k in out.headers) h[k] = out.headers[k];
      h['Content-Type'] = 'application/json';
      h['Content-Length'] = String(Buffer.byteLength(text));
      res.writeHead(200, h);
      res.end(text);
    });
  };
  if (countsInDb) inGroup(decide);
  else decide();
}

const server = http.createServer({ keepAliveTimeout: 5000 }, handle);
server.listen(port, env.HOST ?? '127.0.0.1');
const stop = () => server.close(() => (db.close(), process.exit(0)));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
