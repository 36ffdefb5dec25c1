// `npx tsx bench/wireSnapshot.ts [checkout] > wire.txt`: the raw answers of a fixed set of REST, MCP and OAuth
// requests (a success and every refusal class), with only what changes from run to run normalised, so that two
// versions' files can be compared with `diff`. Without an argument it runs this tree; with one it runs the
// server of that checkout (its own src/ and test helpers, from its directory). docs/contributing.md tells how.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as Harness from '../test/helpers/harness.js';
import type * as OAuthHelpers from '../test/oauth/oauthHelpers.js';
import type * as Idempotency from '../src/auth/idempotency.js';

const HERE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ROOT = path.resolve(process.argv[2] ?? HERE);
const load = <T>(rel: string): Promise<T> => import(pathToFileURL(path.join(ROOT, rel)).href) as Promise<T>;

/** Bodies longer than this are shown as their length and SHA-256 (after normalising), not in full. */
const SHOWN_BYTES = 4096;

interface Answer {
  status: number;
  reason: string;
  headers: [string, string][];
  body: string;
}

/** One request on a fresh connection (`Connection: close`), its answer's headers as sent, in order and case. */
function send(baseUrl: string, method: string, p: string, headers: Record<string, string>, body?: string) {
  return new Promise<Answer>((resolve, reject) => {
    const req = http.request(baseUrl + p, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const pairs: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i], res.rawHeaders[i + 1]]);
        resolve({
          status: res.statusCode!,
          reason: res.statusMessage ?? '',
          headers: pairs,
          body: Buffer.concat(chunks).toString('utf8'),
        });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Replaces what differs between two runs of the same requests by placeholders numbered in order of first
 * appearance: the server's address, generated ids (ULIDs, UUIDs), secrets and tokens, random e-mail suffixes,
 * timestamps, and long hex digests (ETags of documents that carry the address or an id).
 */
class Normaliser {
  #seen = new Map<string, string>();
  constructor(private readonly baseUrls: string[]) {}

  #ph(kind: string, value: string): string {
    const key = `${kind}:${value}`;
    let ph = this.#seen.get(key);
    if (!ph)
      this.#seen.set(
        key,
        (ph = `<${kind}${[...this.#seen.keys()].filter((k) => k.startsWith(`${kind}:`)).length + 1}>`),
      );
    return ph;
  }

  text(s: string): string {
    for (const [i, url] of this.baseUrls.entries()) {
      s = s.replaceAll(url, `http://svc${i || ''}.test`);
      s = s.replaceAll(encodeURIComponent(url), encodeURIComponent(`http://svc${i || ''}.test`));
    }
    return s
      .replace(/\b(svc_[a-z]+_)[A-Za-z0-9_-]{16,}/g, (_m, prefix: string) => prefix + this.#ph('secret', _m))
      .replace(
        /\b([a-z]+_)?[0-9A-HJKMNP-TV-Z]{26}\b/g,
        (m, prefix: string | undefined) => (prefix ?? '') + this.#ph('id', m),
      )
      .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, (m) => this.#ph('uuid', m))
      .replace(/-[a-z0-9]{1,6}@example\.test/g, (m) => this.#ph('email', m) + '@example.test')
      .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)/g, '<time>')
      .replace(/\b[0-9a-f]{32,}\b/g, (m) => this.#ph('hex', m))
      .replace(/\b[A-Za-z0-9_-]{43}\b/g, (m) => this.#ph('b64', m));
  }

  answer(label: string, method: string, p: string, a: Answer): string {
    const lines = [`### ${label}`, `> ${method} ${this.text(p)}`, `${a.status} ${a.reason}`];
    for (const [name, value] of a.headers) {
      const lower = name.toLowerCase();
      // the clock: the date, and the seconds left in a window that started a moment ago
      const v =
        lower === 'date'
          ? '<date>'
          : lower === 'etag'
            ? this.#ph('etag', value)
            : lower === 'ratelimit-reset' || (lower === 'retry-after' && a.status === 429)
              ? '<seconds>'
              : this.text(value);
      lines.push(`${name}: ${v}`);
    }
    const body = this.text(a.body).replace(/"(resetSeconds|retryAfter)":\d+/g, '"$1":<seconds>');
    lines.push(
      '',
      Buffer.byteLength(body) > SHOWN_BYTES
        ? `<${Buffer.byteLength(body)} bytes, sha256 ${createHash('sha256').update(body).digest('hex')}>`
        : body,
      '',
    );
    return lines.join('\n');
  }
}

async function main(): Promise<void> {
  const { startTestServer, createWorld, issueKey } = await load<typeof Harness>('test/helpers/harness.ts');
  const { registerClient, obtainTokens } = await load<typeof OAuthHelpers>('test/oauth/oauthHelpers.ts');
  const { beginIdempotent, fingerprint } = await load<typeof Idempotency>('src/auth/idempotency.ts');

  const t = await startTestServer();
  const limited = await startTestServer({ env: { SVC_RATE_LIMIT: '3' } });
  const metered = await startTestServer({ env: { SVC_MONTHLY_UNITS: '2' } });
  const n = new Normaliser([t.baseUrl, limited.baseUrl, metered.baseUrl]);
  const out: string[] = [];
  try {
    const w = await createWorld(t.rt);
    const narrow = await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: ['me:read'] });
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    const json = { 'content-type': 'application/json' };
    const record = async (
      label: string,
      method: string,
      p: string,
      headers: Record<string, string> = {},
      body?: unknown,
      on: Harness.TestServer = t,
    ) => {
      const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
      out.push(n.answer(label, method, p, await send(on.baseUrl, method, p, headers, text)));
    };
    const messages = `/v1/rooms/${w.roomId}/messages`;
    const missingRoom = `${w.roomId.slice(0, -6)}ZZZZZZ`;

    // REST
    await record('REST success: read', 'GET', '/v1/me', bearer(w.key));
    await record('REST success: list', 'GET', '/v1/rooms?limit=2', bearer(w.key));
    const write = { ...bearer(w.key), ...json, 'idempotency-key': 'wire-1' };
    await record('REST success: write', 'POST', messages, write, { body: 'hello' });
    await record('REST idempotent replay', 'POST', messages, write, { body: 'hello' });
    await record('REST 422 idempotency key reused', 'POST', messages, write, { body: 'other' });
    await beginIdempotent(
      t.rt.services,
      { credentialId: `api_key:${w.keyId}`, method: 'POST', path: messages, key: 'wire-busy' },
      fingerprint({ body: 'busy', roomId: w.roomId }),
    );
    await record(
      'REST 409 idempotency key in use',
      'POST',
      messages,
      { ...write, 'idempotency-key': 'wire-busy' },
      { body: 'busy' },
    );
    await record('REST 400 validation: wrong type', 'POST', messages, { ...bearer(w.key), ...json }, { body: 5 });
    await record(
      'REST 400 validation: unknown field',
      'POST',
      messages,
      { ...bearer(w.key), ...json },
      { body: 'x', y: 1 },
    );
    await record('REST 400 malformed JSON', 'POST', messages, { ...bearer(w.key), ...json }, '{"body":');
    await record('REST 415 not JSON', 'POST', messages, { ...bearer(w.key), 'content-type': 'text/plain' }, 'hi');
    await record('REST 401 no credential', 'GET', '/v1/me');
    await record('REST 401 unknown key', 'GET', '/v1/me', bearer('svc_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'));
    await record('REST 403 insufficient scope', 'GET', '/v1/rooms', bearer(narrow.token));
    await record('REST 404 resource', 'GET', `/v1/rooms/${missingRoom}`, bearer(w.key));
    await record('REST 404 path', 'GET', '/v1/nothing-here', bearer(w.key));
    await record('REST 405 method', 'DELETE', '/v1/me', bearer(w.key));
    await record('OpenAPI document', 'GET', '/v1/openapi.json');
    await record('health', 'GET', '/healthz');

    // MCP
    const mcp25 = {
      ...json,
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    };
    const call = (name: string, args: object, id = 1) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name, arguments: args },
    });
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': { name: 'svc-wire', version: '1.0.0' },
    };
    const mcp26 = (method: string, params: Record<string, unknown>, headers: Record<string, string> = {}) => ({
      headers: {
        ...mcp25,
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': method,
        ...(typeof (params.name ?? params.uri) === 'string' && { 'mcp-name': (params.name ?? params.uri) as string }),
        ...headers,
      },
      body: { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: envelope } },
    });
    await record(
      'MCP success: get_me (2025-11-25)',
      'POST',
      '/mcp',
      { ...mcp25, ...bearer(w.key) },
      call('get_me', {}),
    );
    await record(
      'MCP success: tools/list',
      'POST',
      '/mcp',
      { ...mcp25, ...bearer(w.key) },
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/list',
        params: {},
      },
    );
    await record(
      'MCP success: create_message',
      'POST',
      '/mcp',
      { ...mcp25, ...bearer(w.key) },
      call('create_message', { roomId: w.roomId, body: 'from mcp' }),
    );
    await record(
      'MCP invalid arguments',
      'POST',
      '/mcp',
      { ...mcp25, ...bearer(w.key) },
      call('create_message', { roomId: w.roomId, body: 5 }),
    );
    await record('MCP unknown tool', 'POST', '/mcp', { ...mcp25, ...bearer(w.key) }, call('no_such_tool', {}));
    await record('MCP 401 no credential', 'POST', '/mcp', mcp25, call('get_me', {}));
    await record(
      'MCP 403 insufficient scope',
      'POST',
      '/mcp',
      { ...mcp25, ...bearer(narrow.token) },
      call('create_message', { roomId: w.roomId, body: 'x' }),
    );
    const me26 = mcp26('tools/call', { name: 'get_me', arguments: {} });
    await record('MCP success: get_me (2026-07-28)', 'POST', '/mcp', { ...me26.headers, ...bearer(w.key) }, me26.body);
    const unknown26 = mcp26('no/such', {});
    await record(
      'MCP -32601 method not found',
      'POST',
      '/mcp',
      { ...unknown26.headers, ...bearer(w.key) },
      unknown26.body,
    );
    const mismatch = mcp26('tools/call', { name: 'get_me', arguments: {} }, { 'mcp-name': 'list_rooms' });
    await record('MCP header mismatch', 'POST', '/mcp', { ...mismatch.headers, ...bearer(w.key) }, mismatch.body);
    const missing = mcp26('resources/read', { uri: `svc://rooms/${missingRoom}` });
    await record(
      'MCP -32602 resource not found',
      'POST',
      '/mcp',
      { ...missing.headers, ...bearer(w.key) },
      missing.body,
    );
    await record('MCP batch refused', 'POST', '/mcp', { ...mcp25, ...bearer(w.key) }, [call('get_me', {})]);

    // OAuth
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const client = await registerClient(t);
    await record('OAuth authorization server metadata', 'GET', '/.well-known/oauth-authorization-server');
    await record('OAuth protected resource metadata', 'GET', '/.well-known/oauth-protected-resource/v1');
    const grant = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
    await record(
      'OAuth invalid_grant',
      'POST',
      '/oauth/token',
      form,
      grant({
        grant_type: 'authorization_code',
        code: 'not-a-code',
        redirect_uri: 'http://127.0.0.1:53682/callback',
        code_verifier: 'v'.repeat(43),
        client_id: client.clientId,
      }),
    );
    await record(
      'OAuth invalid_client',
      'POST',
      '/oauth/token',
      form,
      grant({ grant_type: 'refresh_token', refresh_token: 'x', client_id: 'no-such-client' }),
    );
    await record(
      'OAuth unsupported_grant_type',
      'POST',
      '/oauth/token',
      form,
      grant({ grant_type: 'password', client_id: client.clientId }),
    );
    const mcpTokens = await obtainTokens(t, w, client, { resource: `${t.baseUrl}/mcp`, scope: 'mcp:tools me:read' });
    await record('REST 403 token of the other surface', 'GET', '/v1/me', bearer(mcpTokens.access_token));
    await record(
      'MCP success with an OAuth token',
      'POST',
      '/mcp',
      { ...mcp25, ...bearer(mcpTokens.access_token) },
      call('get_me', {}),
    );
    await record(
      'OAuth success: refresh',
      'POST',
      '/oauth/token',
      form,
      grant({ grant_type: 'refresh_token', refresh_token: mcpTokens.refresh_token, client_id: client.clientId }),
    );

    // the 60 s window and the monthly units, each on a server of its own with a small allowance
    const lw = await createWorld(limited.rt);
    for (let i = 1; i <= 4; i++)
      await record(`rate limit, request ${i} of 3`, 'GET', '/v1/me', bearer(lw.key), undefined, limited);
    const mw = await createWorld(metered.rt);
    for (let i = 1; i <= 3; i++)
      await record(`units, request ${i} of 2`, 'GET', '/v1/me', bearer(mw.key), undefined, metered);
  } finally {
    await Promise.all([t.close(), limited.close(), metered.close()]);
  }
  process.stdout.write(out.join('\n'));
}

if (ROOT !== path.resolve(process.cwd())) {
  // another checkout runs from its own directory, so that tsx compiles its sources with its own settings
  const child = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), ROOT], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  process.exit(child.status ?? 1);
} else {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
