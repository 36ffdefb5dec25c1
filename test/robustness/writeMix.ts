import { createHash, randomBytes } from 'node:crypto';
import { sql } from '../../db/sql.js';
import type { Runtime } from '../../src/runtime.js';
import { attempt, type Outcome } from './serverProcess.js';

/** The kinds of write a load sends: REST messages, tasks, records and uploads, and MCP tool calls. */
export const WRITE_KINDS = ['message', 'task', 'record', 'file', 'mcp'] as const;
export type WriteKind = (typeof WRITE_KINDS)[number];

/** One write as sent, with a marker that finds its row, and what the client saw. */
export interface SentWrite {
  kind: WriteKind;
  marker: string;
  outcome: Outcome;
}

const RECORD_BODY = 'minutes '.repeat(250);
const fileBytes = (marker: string) => createHash('sha512').update(marker).digest().toString('hex').repeat(64); // 8 KiB

/** Sends write number `i` of a mix (the kind rotates) to the server at `base`. */
export async function sendWrite(base: string, key: string, roomId: string, i: number): Promise<SentWrite> {
  const kind = WRITE_KINDS[i % WRITE_KINDS.length];
  const marker = `w${i}-${randomBytes(4).toString('hex')}`;
  const auth = { authorization: `Bearer ${key}` };
  const json = (body: unknown) => ({
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const room = `${base}/v1/rooms/${roomId}`;
  let outcome: Outcome;
  if (kind === 'message') outcome = await attempt(`${room}/messages`, json({ body: marker }));
  else if (kind === 'task') outcome = await attempt(`${room}/tasks`, json({ title: marker, description: RECORD_BODY }));
  else if (kind === 'record') outcome = await attempt(`${room}/records`, json({ title: marker, body: RECORD_BODY }));
  else if (kind === 'file') {
    outcome = await attempt(`${room}/files?filename=${marker}.txt`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'text/plain' },
      body: fileBytes(marker),
    });
  } else {
    outcome = await attempt(`${base}/mcp`, {
      method: 'POST',
      headers: {
        ...auth,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: i,
        method: 'tools/call',
        params: { name: 'create_message', arguments: { roomId, body: marker } },
      }),
    });
  }
  return { kind, marker, outcome };
}

/** True when the client got the operation's success. */
export function succeeded(w: SentWrite): boolean {
  if (!('status' in w.outcome)) return false;
  if (w.kind === 'mcp') return w.outcome.status === 200 && w.outcome.body?.result && !w.outcome.body.result.isError;
  return w.outcome.status === 201;
}

/**
 * How many rows each write left, and whether each row is whole (every column as sent: the full body, the
 * full file). A write is "whole" in the database when it left exactly one complete row, "absent" with none.
 */
export async function rowsOfWrites(
  rt: Runtime,
  writes: SentWrite[],
): Promise<Map<string, { count: number; whole: boolean }>> {
  const q = async (text: string) => (await sql<Record<string, any>>(rt.ds, text)).rows;
  const messages = await q('SELECT "body" FROM "messages"');
  const tasks = await q('SELECT "title", "description" FROM "tasks"');
  const records = await q('SELECT "title", "body" FROM "records"');
  const files = await q('SELECT "filename", "size", "sha256" FROM "files"');
  const out = new Map<string, { count: number; whole: boolean }>();
  for (const w of writes) {
    let found: boolean[];
    if (w.kind === 'message' || w.kind === 'mcp') found = messages.filter((m) => m.body === w.marker).map(() => true);
    else if (w.kind === 'task')
      found = tasks.filter((t) => t.title === w.marker).map((t) => t.description === RECORD_BODY);
    else if (w.kind === 'record')
      found = records.filter((r) => r.title === w.marker).map((r) => r.body === RECORD_BODY);
    else {
      const bytes = Buffer.from(fileBytes(w.marker));
      const sha = createHash('sha256').update(bytes).digest('hex');
      found = files
        .filter((f) => f.filename === `${w.marker}.txt`)
        .map((f) => Number(f.size) === bytes.length && f.sha256 === sha);
    }
    out.set(w.marker, { count: found.length, whole: found.every(Boolean) });
  }
  return out;
}
