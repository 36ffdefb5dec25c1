// What an LLM agent pays, in tokens (o200k_base, gpt-tokenizer), to use svc over MCP: the tool list (every
// tool, one toolset, read-only) and a scripted agent session (list rooms, read a room's 20 newest messages,
// list its tasks, post a message), with each list tool's text against its user content. In-process, on a
// throwaway SQLite database; `npm run bench` prints it (BENCH_ONLY=tokens: this alone), and
// test/mcp/tokenBudget.test.ts holds the figures to the limits (bench/README.md).
import { fileURLToPath } from 'node:url';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { ALL_SCOPES, createWorld, issueKey, startTestServer, type TestServer } from '../test/helpers/harness.js';

export const tokensOf = (s: string): number => encode(s).length;

/** The limits of the token budget (what the test asserts). */
export const TOKEN_LIMITS = {
  /** `tools/list` for a key holding every scope. */
  toolList: 8000,
  /** The text of a page of 20 short messages. */
  messagePage: 900,
};

/** Fields whose values people wrote (or named): a list's user content. */
const USER_TEXT = new Set(['name', 'title', 'body', 'description', 'filename', 'comment', 'text']);

/** The tokens of the strings people wrote in a value (names and titles, bodies, descriptions …). */
export function userContentTokens(v: unknown): number {
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + userContentTokens(x), 0);
  if (!v || typeof v !== 'object') return 0;
  let n = 0;
  for (const [k, x] of Object.entries(v))
    n += USER_TEXT.has(k) && typeof x === 'string' ? tokensOf(x) : userContentTokens(x);
  return n;
}

/** An object id as the product makes them (`task_01M8…`, `evt_qxTB…`): what an agent passes to the next call. */
const OBJECT_ID = /^[a-z]+_[A-Za-z0-9_-]{16,}$/;

/**
 * The tokens of the distinct object ids in a value. A list whose rows are mostly ids (tasks, events, search
 * hits) carries them because the agent acts on them: they are content, not overhead, and an id alone is
 * 10-20 tokens, so "20 a row" cannot hold them.
 */
export function idTokens(v: unknown, seen = new Set<string>()): number {
  if (typeof v === 'string') {
    if (!OBJECT_ID.test(v) || seen.has(v)) return 0;
    seen.add(v);
    return tokensOf(v);
  }
  if (!v || typeof v !== 'object') return 0;
  let n = 0;
  for (const x of Array.isArray(v) ? v : Object.values(v)) n += idTokens(x, seen);
  return n;
}

// Twenty short messages of a team's day, about 22 tokens each (the page of the issue's measurement).
const MESSAGES = [
  'Morning all, the staging deploy finished overnight and the smoke tests passed, so we can start the review.',
  'Thanks. I will go through the payment flow first because that is where the last regression came from.',
  'The login page still shows the old logo on Safari; I think the cache headers on the CDN are wrong.',
  'I can take the CDN headers. Does anyone remember who owns the cache configuration these days?',
  'It was moved to the platform team in October, so Priya should know the right place to change it.',
  'Priya is out until Thursday. I will open a ticket for them and link the screenshots from Safari.',
  'Payment flow looks fine with test cards. Refunds still take about forty seconds to show up in the list.',
  'Forty seconds is expected, the ledger job runs every thirty seconds plus the time to reconcile.',
  'Could we show a pending state in the meantime? Customers have written in asking if it worked.',
  'Good idea. I will draft the copy for the pending state and share it here before lunch today.',
  'The release notes need a line about the new export format; who is writing them this week?',
  'I am on the release notes. I will add the export format and the fix for the time zone bug too.',
  'Reminder that the retro is moved to Friday at 3pm because of the all-hands on Thursday afternoon.',
  'Copy for the pending state: "Your refund is on its way; it can take a minute to appear here."',
  'Looks good to me. Maybe drop "here" since the message sits right next to the list anyway.',
  'Agreed, dropping it. I will put the change up for review once the tests finish on my branch.',
  'The export format change broke one integration test; fixing the fixture now, should take ten minutes.',
  'Fixture fixed and the pipeline is green again. Merging the export change after one more review.',
  'Reviewed and approved. Please squash the commits so the changelog picks up a single clean entry.',
  'Squashed and merged. Staging will pick it up on the next deploy, which runs at the top of the hour.',
];

async function mcp(t: TestServer, key: string, method: string, params: unknown, headers: Record<string, string> = {}) {
  const res = await t.fetch('/mcp', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: any; error?: { message: string } };
  if (!body.result) throw new Error(`${method}: ${body.error?.message ?? res.status}`);
  return body.result;
}

export interface SessionStep {
  step: string;
  tool: string;
  rows?: number;
  /** Tokens of the text block, of the structuredContent's JSON, of the people's writing in it, of its ids. */
  text: number;
  structured: number;
  user: number;
  ids: number;
}

export interface TokenFigures {
  toolList: { label: string; tools: number; bytes: number; tokens: number }[];
  session: SessionStep[];
  lists: SessionStep[];
}

/** A list tool's text budget: twice its content and 20 tokens a row; content counts ids when `withIds`. */
export const listLimit = (s: SessionStep, withIds: boolean): number =>
  2 * (s.user + (withIds ? s.ids : 0)) + 20 * (s.rows ?? 0);

/** Measures everything on a fresh in-process server. */
export async function measureTokens(): Promise<TokenFigures> {
  await using t = await startTestServer();
  const w = await createWorld(t.rt);
  const all = (
    await issueKey(t.rt, { userId: w.owner.id, organizationId: w.orgId, scopes: [...ALL_SCOPES, 'agent:invoke'] })
  ).token;

  const toolList: TokenFigures['toolList'] = [];
  for (const [label, key, headers] of [
    ['every scope', all, {}],
    ['demo key (test scopes)', w.key, {}],
    ['toolset messages', all, { 'x-mcp-toolsets': 'messages' }],
    ['read-only', all, { 'x-mcp-readonly': 'true' }],
  ] as const) {
    const { tools } = await mcp(t, key, 'tools/list', {}, headers);
    const json = JSON.stringify({ tools });
    toolList.push({ label, tools: tools.length, bytes: Buffer.byteLength(json), tokens: tokensOf(json) });
  }

  // the room: 20 messages from two people, tasks (one done), a record, a file
  const call = async (name: string, args: Record<string, unknown>, key = all) =>
    mcp(t, key, 'tools/call', { name, arguments: args });
  const memberKey = (await issueKey(t.rt, { userId: w.member.id, organizationId: w.orgId, scopes: [...ALL_SCOPES] }))
    .token;
  for (const [i, body] of MESSAGES.entries())
    await call('create_message', { roomId: w.roomId, body }, i % 2 ? memberKey : all);
  for (const [title, extra] of [
    ['Fix the CDN cache headers for the logo', { assigneeId: w.member.id }],
    ['Draft the pending-state copy for refunds', { status: 'in_progress' }],
    ["Write this week's release notes", { dueDate: '2026-12-04' }],
    ['Squash the export change', { status: 'done' }],
  ] as const)
    await call('create_task', { roomId: w.roomId, title, ...extra });
  await call('create_record', {
    roomId: w.roomId,
    title: 'Weekly sync',
    body: '## Decisions\n- Ship the export format on Monday',
  });
  await call('upload_file', {
    roomId: w.roomId,
    filename: 'notes.md',
    contentType: 'text/markdown',
    text: '# Notes\nShip it.',
  });

  const step = async (label: string, name: string, args: Record<string, unknown>): Promise<SessionStep> => {
    const r = await call(name, args);
    const text = (r.content as { type: string; text?: string }[]).map((c) => c.text ?? '').join('');
    const data = r.structuredContent as { data?: unknown[] } | undefined;
    return {
      step: label,
      tool: name,
      rows: Array.isArray(data?.data) ? data.data.length : undefined,
      text: tokensOf(text),
      structured: tokensOf(JSON.stringify(r.structuredContent ?? null)),
      user: userContentTokens(r.structuredContent),
      ids: idTokens(r.structuredContent),
    };
  };
  const session = [
    await step('list rooms', 'list_rooms', {}),
    await step('read the 20 newest messages', 'list_messages', { roomId: w.roomId, order: 'desc', limit: 20 }),
    await step('list its tasks', 'list_tasks', { roomId: w.roomId }),
    await step('post a message', 'create_message', {
      roomId: w.roomId,
      body: 'Summary: CDN headers, refund copy and release notes are assigned.',
    }),
  ];
  const lists = [
    session[0],
    session[1],
    session[2],
    await step('members', 'list_room_members', { roomId: w.roomId }),
    await step('records', 'list_records', { roomId: w.roomId }),
    await step('events', 'list_events', { roomId: w.roomId, limit: 20 }),
    await step('search', 'search_content', { q: 'export' }),
  ];
  return { toolList, session, lists };
}

/** The figures as the bench prints them. */
export function printTokens(f: TokenFigures): void {
  console.log('\nMCP tokens (o200k_base)');
  console.log('  tools/list');
  for (const r of f.toolList)
    console.log(
      `    ${r.label.padEnd(24)} ${String(r.tools).padStart(3)} tools ${String(r.bytes).padStart(7)} B ${String(r.tokens).padStart(6)} tokens`,
    );
  const row = (s: SessionStep) =>
    `    ${s.step.padEnd(30)} ${s.tool.padEnd(18)} ${String(s.rows ?? '').padStart(3)} rows  text ${String(s.text).padStart(5)}  structured ${String(s.structured).padStart(5)}  user ${String(s.user).padStart(4)}`;
  console.log('  agent session (text is what the model reads)');
  for (const s of f.session) console.log(row(s));
  console.log(
    `    ${'total'.padEnd(30)} ${''.padEnd(18)}           text ${String(f.session.reduce((n, s) => n + s.text, 0)).padStart(5)}  structured ${String(f.session.reduce((n, s) => n + s.structured, 0)).padStart(5)}`,
  );
  console.log(
    '  list tools: text against 2 x user content + 20 a row, and against 2 x (user content + ids) + 20 a row',
  );
  for (const s of f.lists)
    console.log(`${row(s)}  ids ${String(s.ids).padStart(4)}  limits ${listLimit(s, false)} / ${listLimit(s, true)}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) printTokens(await measureTokens());
