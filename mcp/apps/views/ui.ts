// What every view shares, in the browser: the App connection to the host, and DOM built from text only.
// Nothing a tool returns is ever parsed as markup: every value reaches the page through `textContent`
// or an attribute the page sets itself (never `innerHTML`), so a message body or a title that holds
// markup shows as the characters it is.
import { App } from '@modelcontextprotocol/ext-apps';

export type ToolResult = {
  content?: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

type Child = Node | string | null | undefined | false;

/** An element with a class, attributes set one by one (never markup), and children as nodes or text. */
export function el(tag: string, attrs: Record<string, string> = {}, ...children: Child[]): HTMLElement {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) if (c !== null && c !== undefined && c !== false) node.append(c);
  return node;
}

/** Replaces what an element shows. */
export function show(parent: HTMLElement, ...children: Child[]): void {
  parent.replaceChildren(...children.filter((c): c is Node | string => c !== null && c !== undefined && c !== false));
}

/** The error a tool answered (`isError`), as one line: its code and message from the REST envelope. */
export function errorOf(result: ToolResult): string | null {
  if (!result.isError) return null;
  const text = result.content?.find((c) => c.type === 'text')?.text ?? '';
  try {
    const { error } = JSON.parse(text) as { error: { code: string; message: string } };
    return `${error.code}: ${error.message}`;
  } catch {
    return text || 'The tool call failed';
  }
}

/**
 * User names from a tool's text (its `users: Name=usr_…, …` legend line): the structured content carries ids
 * only, and the text is what the caller may read anyway.
 */
export function namesOf(result: ToolResult, into = new Map<string, string>()): Map<string, string> {
  for (const block of result.content ?? []) {
    if (block.type !== 'text' || !block.text) continue;
    const line = block.text.split('\n').find((l) => l.startsWith('users: '));
    if (!line) continue;
    const pair = /("(?:[^"\\]|\\.)*"#\w{4}|[^,=]+)=(usr_[0-9A-Za-z]+)/g;
    for (const m of line.slice('users: '.length).matchAll(pair)) {
      const shown = m[1].trim();
      into.set(m[2], shown.startsWith('"') ? (JSON.parse(shown.slice(0, shown.lastIndexOf('#'))) as string) : shown);
    }
  }
  return into;
}

/** A person by name when a tool told it, else by id. */
export const nameOf = (names: Map<string, string>, id: string | null | undefined): string =>
  id ? (names.get(id) ?? id) : '—';

/** A date as the viewer's locale shows it (the ISO text when it is not a date). */
export function when(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

export interface ViewContext {
  app: App;
  /** Calls a tool of svc through the host: the same tool, token, scopes and rules as the model's calls. */
  call(name: string, args: Record<string, unknown>): Promise<ToolResult>;
  /** Shows a status line (a refusal, a confirmation, a pending call). */
  status(text: string, kind?: 'error' | 'ok' | 'info'): void;
}

/**
 * Connects the view to its host. `onInput` gets the tool call's arguments, `onResult` each result of the view's
 * tool the host sends (the first, and any later one).
 */
export function startView(
  name: string,
  handlers: {
    onInput?(args: Record<string, unknown>, ctx: ViewContext): void;
    onResult(result: ToolResult, ctx: ViewContext): void;
  },
): ViewContext {
  const app = new App({ name: `svc ${name}`, version: '1.0.0' });
  const statusLine = document.getElementById('status')!;
  const ctx: ViewContext = {
    app,
    async call(tool, args) {
      return (await app.callServerTool({ name: tool, arguments: args })) as ToolResult;
    },
    status(text, kind = 'info') {
      statusLine.textContent = text;
      statusLine.setAttribute('data-kind', kind);
    },
  };
  app.ontoolinput = (p) => handlers.onInput?.((p.arguments ?? {}) as Record<string, unknown>, ctx);
  app.ontoolresult = (r) => handlers.onResult(r as ToolResult, ctx);
  app.connect().catch((err: unknown) => ctx.status(`Could not reach the host: ${String(err)}`, 'error'));
  return ctx;
}

/** Starts work from an event handler (it reports its own failures on the status line). */
export function later(work: Promise<unknown>): void {
  work.catch(() => undefined);
}
