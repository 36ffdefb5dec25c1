// The conversation view (list_messages): the latest messages of a room with their authors and attachments,
// following new ones by calling list_messages through the host every few seconds (`since` the newest message
// shown), and a box to post one with create_message. Attachments come from list_files (a file names its
// message), read as the room's files grow.
import { el, errorOf, later, nameOf, namesOf, show, startView, when, type ToolResult, type ViewContext } from './ui.js';

interface Message {
  id: string;
  roomId: string;
  authorId: string;
  postedBy: string;
  body: string;
  createdAt: string;
}

interface FileMeta {
  id: string;
  messageId: string | null;
  filename: string;
  size: number;
}

/** How often the view asks for new messages. */
const POLL_MS = 2000;
const SHOWN = 50;
/** Files are read again when new messages come, and at least every this many polls (a file follows its message). */
const FILES_EVERY = 5;
/** The most pages of files one reading walks (200 files each); the next reading goes on from there. */
const FILE_PAGES = 25;

const root = document.getElementById('app')!;
const names = new Map<string, string>();
const byId = new Map<string, Message>();
let roomId: string | null = null;
let polling = false;
let polls = 0;
/** Each message's attachments by id. */
const attachments = new Map<string, FileMeta[]>();
const fileIds = new Set<string>();
/**
 * Where the next reading of the files starts: the cursor of the last page read (files come oldest first, so the
 * files added since are on that page or after it). Undefined before the first reading.
 */
let filesFrom: string | undefined;
/** False once list_files is refused (a connection without files:read or its toolset): messages only. */
let filesReadable = true;

const ordered = () => [...byId.values()].sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1)).slice(-SHOWN);

function render(ctx: ViewContext): void {
  const input = el('textarea', { id: 'compose', rows: '2', maxlength: '10000', placeholder: 'Write a message' });
  const send = el('button', { type: 'button', class: 'primary' }, 'Send');
  send.addEventListener('click', () => later(post(ctx, input as HTMLTextAreaElement)));
  show(
    root,
    el(
      'ol',
      { id: 'messages', class: 'messages' },
      ...ordered().map((m) =>
        el(
          'li',
          { 'data-message': m.id },
          el(
            'div',
            { class: 'meta' },
            el('strong', { class: 'author' }, nameOf(names, m.authorId)),
            m.postedBy === 'user' ? null : el('span', { class: 'badge' }, m.postedBy),
            ` ${when(m.createdAt)}`,
          ),
          el('div', { class: 'body' }, m.body),
          attachmentList(m.id),
        ),
      ),
    ),
    el('div', { class: 'row compose' }, input, send),
  );
}

/** A message's attachments by file name and size, as text. */
function attachmentList(messageId: string): HTMLElement | null {
  const files = attachments.get(messageId);
  if (!files?.length) return null;
  return el(
    'ul',
    { class: 'attachments', 'aria-label': 'Attachments' },
    ...files.map((f) =>
      el(
        'li',
        { 'data-file': f.id },
        el('span', { class: 'filename' }, f.filename),
        el('span', { class: 'muted' }, ` ${sizeOf(f.size)}`),
      ),
    ),
  );
}

const sizeOf = (n: number): string =>
  n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;

/** Reads the room's files added since the last reading; true when a message got an attachment. */
async function loadFiles(ctx: ViewContext): Promise<boolean> {
  if (!roomId || !filesReadable) return false;
  let added = false;
  let cursor = filesFrom;
  try {
    for (let page = 0; page < FILE_PAGES; page++) {
      const result = await ctx.call('list_files', { roomId, limit: 200, ...(cursor ? { cursor } : {}) });
      if (result.isError) throw new Error(errorOf(result) ?? 'list_files failed');
      const out = result.structuredContent as { data: FileMeta[]; nextCursor: string | null };
      for (const f of out.data) {
        if (fileIds.has(f.id) || !f.messageId) continue;
        fileIds.add(f.id);
        attachments.set(f.messageId, [...(attachments.get(f.messageId) ?? []), f]);
        added = true;
      }
      filesFrom = cursor;
      if (!out.nextCursor) break;
      cursor = out.nextCursor;
      filesFrom = cursor;
    }
  } catch {
    // no files:read, or list_files outside the connection's toolsets: the conversation without attachments
    filesReadable = false;
  }
  return added;
}

function add(result: ToolResult): boolean {
  namesOf(result, names);
  let added = false;
  for (const m of (result.structuredContent as { data: Message[] }).data) {
    if (!byId.has(m.id)) added = true;
    byId.set(m.id, m);
    roomId ??= m.roomId;
  }
  return added;
}

async function poll(ctx: ViewContext): Promise<void> {
  if (!roomId || polling) return;
  polling = true;
  try {
    const newest = ordered().at(-1)?.createdAt;
    const result = await ctx.call('list_messages', {
      roomId,
      ...(newest ? { since: newest } : { order: 'desc' }),
      limit: SHOWN,
    });
    const error = errorOf(result);
    if (error) return ctx.status(error, 'error');
    const added = add(result);
    const withFiles = (added || ++polls % FILES_EVERY === 0) && (await loadFiles(ctx));
    if (added || withFiles) render(ctx);
  } catch (err) {
    ctx.status(err instanceof Error ? err.message : String(err), 'error');
  } finally {
    polling = false;
  }
}

async function post(ctx: ViewContext, input: HTMLTextAreaElement): Promise<void> {
  const body = input.value.trim();
  if (!roomId || !body) return;
  try {
    const result = await ctx.call('create_message', { roomId, body });
    const error = errorOf(result);
    if (error) return ctx.status(error, 'error');
    input.value = '';
    ctx.status('Sent', 'ok');
    await poll(ctx);
  } catch (err) {
    ctx.status(err instanceof Error ? err.message : String(err), 'error');
  }
}

let timer: ReturnType<typeof setInterval> | undefined;
startView('messages', {
  onInput(args) {
    if (typeof args.roomId === 'string') roomId = args.roomId;
  },
  onResult(result: ToolResult, ctx) {
    const error = errorOf(result);
    if (error) return ctx.status(error, 'error');
    add(result);
    render(ctx);
    later(loadFiles(ctx).then((added) => added && render(ctx)));
    timer ??= setInterval(() => later(poll(ctx)), POLL_MS);
  },
});
