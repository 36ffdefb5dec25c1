import type { Response } from 'express';
import { html, type SafeHtml } from './html.js';
import {
  CACHE_CONTROL_HEADER,
  CONTENT_SECURITY_POLICY_HEADER,
  CONTENT_TYPE_HEADER,
  FRAME_OPTIONS_HEADER,
  REFERRER_POLICY_HEADER,
} from '../http/headers.js';

export interface PageOptions {
  title: string;
  body: SafeHtml;
  /**
   * When signed in: shows who, links to the settings pages and to /logout (sign out everywhere), and a sign-out button.
   */
  signedIn?: { email: string; csrf: string };
  /** A wider main column, for pages with tables (developer settings). */
  wide?: boolean;
}

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1b1b1f;background:#f6f6f8}
header{display:flex;gap:1rem;align-items:center;padding:.75rem 1.5rem;background:#fff;border-bottom:1px solid #ddd}
header .who{margin-left:auto;color:#555}
main{max-width:40rem;margin:2rem auto;padding:1.5rem 2rem;background:#fff;border:1px solid #ddd;border-radius:8px}
label{display:block;margin:.75rem 0 .25rem;font-weight:600}
input[type=email],input[type=password],input[type=text],select{width:100%;padding:.5rem;box-sizing:border-box;font:inherit}
button{font:inherit;padding:.5rem 1.25rem;margin:1rem .5rem 0 0;cursor:pointer}
.error{color:#a30000;background:#fff0f0;padding:.5rem .75rem;border-radius:4px}
.muted{color:#666;font-size:.9em}
dt{font-weight:600;font-family:ui-monospace,monospace}dd{margin:0 0 .5rem 1rem}
form.inline{display:inline}form.inline button{margin:0}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.5rem;border-bottom:1px solid #eee;vertical-align:top}
main.wide{max-width:64rem}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#fafafa;padding:.5rem;border-radius:4px}
header nav a{margin-right:.75rem}
h2{margin-top:2.5rem;padding-top:1rem;border-top:1px solid #eee}h3{margin:1.5rem 0 .5rem}
code,.mono{font-family:ui-monospace,monospace;font-size:.9em}td code{white-space:nowrap}
input[type=url],input[type=number],textarea{width:100%;padding:.5rem;box-sizing:border-box;font:inherit}
input[type=number]{width:7rem}textarea{font-family:ui-monospace,monospace;min-height:4.5rem}
input[readonly]{background:#f3f3f6;font-family:ui-monospace,monospace}
fieldset{border:1px solid #ddd;border-radius:6px;margin:.75rem 0;padding:.5rem 1rem}legend{font-weight:600;padding:0 .25rem}
.choice{display:flex;gap:.5rem;align-items:baseline;margin:.2rem 0}.choice label{display:inline;margin:0;font-weight:600;font-family:ui-monospace,monospace}
.notice{color:#0b5a1f;background:#eefaf0;padding:.5rem .75rem;border-radius:4px}
.once{border:2px solid #b36b00;background:#fff8ec;border-radius:8px;padding:.75rem 1rem;margin:1rem 0}
.copyrow{display:flex;gap:.5rem;align-items:center}.copyrow button{margin:0}
.card{border:1px solid #ddd;border-radius:8px;padding:.75rem 1rem;margin:1rem 0}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:flex-end}.actions form{margin:0}.actions button{margin:.5rem 0 0}
.badge{display:inline-block;padding:0 .5rem;border-radius:1rem;font-size:.85em;background:#eee}.badge.ok{background:#e3f6e6}.badge.off{background:#fde8e8}
.danger{color:#a30000}
`;

/** The frame of every server-rendered page. Everything interpolated is escaped by `html`. */
export function page(o: PageOptions): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${o.title} · svc</title>
<style>${STYLE}</style>
</head>
<body>
<header><strong>svc</strong>${
    o.signedIn
      ? html`<span class="who">Signed in as ${o.signedIn.email}</span><nav aria-label="Settings"><a href="/settings/developer">Developer</a><a href="/settings/apps">Apps</a><a href="/logout">Sessions</a></nav>
<form class="inline" method="post" action="/logout"><input type="hidden" name="csrf" value="${o.signedIn.csrf}"><button type="submit">Sign out</button></form>`
      : null
  }</header>
<main${o.wide ? html` class="wide"` : null}>
<h1>${o.title}</h1>
${o.body}
</main>
</body>
</html>`;
}

export interface SendPageOptions {
  /** Allows the page's own scripts (`script-src 'self'`: files served by this site, never inline). */
  scripts?: boolean;
}

/**
 * Sends a page: never cached, never framed (clickjacking on the consent screen), no scripts unless asked
 * (then only this site's own files). `form-action` is left out on purpose: the consent form's answer
 * redirects to the client.
 */
export function sendPage(res: Response, status: number, body: SafeHtml, o: SendPageOptions = {}): void {
  res
    .status(status)
    .set({
      [CONTENT_TYPE_HEADER]: 'text/html; charset=utf-8',
      [CACHE_CONTROL_HEADER]: 'no-store',
      [CONTENT_SECURITY_POLICY_HEADER]: `default-src 'none';${o.scripts ? " script-src 'self';" : ''} style-src 'unsafe-inline'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'`,
      [FRAME_OPTIONS_HEADER]: 'DENY',
      // not `no-referrer`: under it browsers send `Origin: null` with the pages' own form posts, which the
      // CSRF check (csrf.ts) then refuses; `same-origin` still sends nothing to other sites
      [REFERRER_POLICY_HEADER]: 'same-origin',
    })
    .send(body.value);
}

/** A plain error page (bad authorization request, failed CSRF check, …). */
export function sendErrorPage(res: Response, status: number, title: string, message: string): void {
  sendPage(res, status, page({ title, body: html`<p class="error" role="alert">${message}</p>` }));
}
