import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createWorld, startTestServer, type TestServer, type World } from '../helpers/harness.js';
import { Browser, field } from '../oauth/oauthHelpers.js';

/** A clock the test moves by hand. */
export interface Clock {
  now: () => Date;
  advance(ms: number): void;
}

export function clockAt(iso: string): Clock {
  let t = new Date(iso).getTime();
  return { now: () => new Date(t), advance: (ms) => void (t += ms) };
}

/** Everything the server logged, as text (the logger is swapped for one that writes here at `trace`). */
export interface LogCapture {
  text(): string;
}

export function captureLogs(t: TestServer): LogCapture {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  t.rt.services.log = pino({ level: 'trace' }, sink);
  return { text: () => chunks.join('') };
}

export async function startDeveloperEnv(o: { now?: string } = {}) {
  const clock = clockAt(o.now ?? '2026-06-10T12:00:00.000Z');
  const t = await startTestServer({ now: clock.now });
  const w = await createWorld(t.rt);
  return { t, w, clock, [Symbol.asyncDispose]: () => t.close() };
}

/** A browser signed in as `user`, with helpers for the developer settings page. */
export class DevBrowser extends Browser {
  /** The HTML of the last page read with `page()` or returned by `submit()`. */
  last = '';

  static async signedIn(t: TestServer, user: { email: string; password: string }): Promise<DevBrowser> {
    const b = new DevBrowser(t.baseUrl);
    const r = await b.signIn(user.email, user.password, '/settings/developer');
    if (r.status !== 303) throw new Error(`sign-in answered ${r.status}`);
    return b;
  }

  async page(path = '/settings/developer'): Promise<{ status: number; html: string; res: Response }> {
    const res = await this.get(path);
    const html = await res.text();
    this.last = html;
    return { status: res.status, html, res };
  }

  csrf(): string {
    return field(this.last, 'csrf');
  }

  /** POSTs a form (repeated fields as arrays) with the CSRF token of the last page unless `csrf` is given. */
  async submit(
    path: string,
    fields: Record<string, string | string[]>,
    o: { csrf?: string | null; origin?: string } = {},
  ) {
    const params = new URLSearchParams();
    const csrf = o.csrf === undefined ? this.csrf() : o.csrf;
    if (csrf !== null) params.append('csrf', csrf);
    for (const [k, v] of Object.entries(fields)) for (const x of Array.isArray(v) ? v : [v]) params.append(k, x);
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    if (o.origin) headers.origin = o.origin;
    const res = await this.request(path, { method: 'POST', headers, body: params.toString() });
    const html = await res.text();
    if (res.status === 200 || res.status >= 400) this.last = html;
    return { status: res.status, html, location: res.headers.get('location'), res };
  }
}

/** The value of the read-only `Copy it now` field of a page, or null. */
export function secretShown(html: string): string | null {
  const m =
    /<label for="copy-it-now">Copy it now<\/label>\s*<div class="copyrow"><input id="copy-it-now" type="text" readonly autofocus value="([^"]*)"/.exec(
      html,
    );
  return m ? m[1] : null;
}

export type { World };
