// An agent connector without an LLM (docs/agents.md#an-example-connector): it turns the lines of a run's input
// text, or of the body of the record the run names, into tasks in bulk and posts a summary message, working
// through /mcp with the run's delegated token, then answers the invocation with {status, output}.
//
//   CONNECTOR_SECRETS=whsec_… PORT=4100 npx tsx examples/agent-connector.ts
//
// Register it (an organization admin on /settings/developer, or the operator):
//   npx svc connector create --org org_… --name "Lines to tasks" --url http://127.0.0.1:4100/invoke \
//     --scopes mcp:tools,tasks:write,messages:write,records:read
// (an internal address: the server's SVC_SSRF_ALLOWLIST must allow it, e.g. 127.0.0.1/32).
import { createServer, type Server } from 'node:http';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { verifyWebhook } from '../src/webhooks/verifyWebhook.js';

const MAX_BODY = 1024 * 1024;
const MAX_TASKS = 100;

interface Invocation {
  run: { id: string; roomId: string; input: { text: string; recordId: string | null; taskId: string | null } };
  delegation: { accessToken: string; mcpUrl: string };
}

type Answer = { status: 'succeeded'; output: unknown } | { status: 'failed'; error: string };

interface ToolResult {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content?: { type: string; text?: string }[];
}

/** Calls a tool; a tool error becomes an exception with the service's message. */
async function tool(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  if (r.isError) throw new Error(`${name}: ${r.content?.map((c) => c.text ?? '').join(' ') || 'failed'}`);
  return r.structuredContent ?? {};
}

/** Does one run's work through /mcp with its delegated token. */
async function work(inv: Invocation): Promise<Answer> {
  const transport = new StreamableHTTPClientTransport(new URL(inv.delegation.mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${inv.delegation.accessToken}` } },
  });
  const client = new Client({ name: 'svc-example-agent-connector', version: '1.0.0' });
  await client.connect(transport);
  try {
    const { roomId, input } = inv.run;
    let source = input.text;
    if (input.recordId)
      source = String((await tool(client, 'get_record', { roomId, recordId: input.recordId })).body ?? '');
    const lines = source
      .split(/\r?\n/)
      .map((l) => l.replace(/^\s*(?:[-*•]|\d+[.)])\s*/, '').trim())
      .filter(Boolean)
      .slice(0, MAX_TASKS);
    if (!lines.length)
      return { status: 'failed', error: 'nothing to turn into tasks: the input has no non-empty line' };
    const taskIds: string[] = [];
    for (const title of lines)
      taskIds.push(String((await tool(client, 'create_task', { roomId, title: title.slice(0, 200) })).id));
    const summary = `Created ${taskIds.length} task${taskIds.length === 1 ? '' : 's'}${input.recordId ? ' from the record' : ''}: ${lines.join('; ').slice(0, 1000)}`;
    const message = await tool(client, 'create_message', { roomId, body: summary });
    return { status: 'succeeded', output: { tasks: taskIds, messageId: message.id, summary } };
  } finally {
    await client.close().catch(() => undefined);
  }
}

/**
 * The connector's HTTP server. It verifies every invocation (the run's connector secret) before
 * trusting it, and deduplicates on the run id (`Svc-Webhook-Id`): invocation is at least once, so a repeated
 * one gets the same answer instead of doing the work twice.
 */
export function createAgentConnector(secrets: string[]): Server {
  const runs = new Map<string, Promise<Answer>>();
  return createServer((req, res) => {
    if (req.method !== 'POST') return void res.writeHead(405, { Allow: 'POST' }).end();
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) req.destroy();
      else chunks.push(c);
    });
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const v = verifyWebhook({ rawBody, headers: req.headers, secrets });
      if (!v.ok || !v.eventId)
        return void res
          .writeHead(401, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ error: v.ok ? 'no run id' : v.reason }));
      let answer = runs.get(v.eventId);
      if (!answer) {
        const inv = JSON.parse(rawBody.toString('utf8')) as Invocation;
        answer = work(inv).catch((err: unknown): Answer => ({
          status: 'failed',
          error: err instanceof Error ? err.message : String(err),
        }));
        runs.set(v.eventId, answer);
      }
      answer.then(
        (a) => {
          console.log(JSON.stringify({ run: v.eventId, status: a.status }));
          res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(a));
        },
        () => res.writeHead(500).end(),
      );
    });
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const secrets = (process.env.CONNECTOR_SECRETS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const port = Number(process.env.PORT ?? 4100);
  if (!secrets.length) {
    console.error("Set CONNECTOR_SECRETS to the connector's signing secret.");
    process.exit(1);
  }
  createAgentConnector(secrets).listen(port, '127.0.0.1', () =>
    console.log(`agent connector listening on http://127.0.0.1:${port}/invoke`),
  );
}
