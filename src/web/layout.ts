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
   * When signed in: shows who, links to the settings pages and a sign-out button.
   */
  signedIn?: { email: string; csrf: string };
  /** A wider main column, for pages with tables (developer settings). */
  wide?: boolean;
  /** A side navigation beside the main column (one column on a phone: it goes above). */
  side?: SafeHtml;
}

// One column on a phone, a side navigation from 52rem; tables sit in containers that scroll on their own,
// so the document never scrolls sideways. Colours keep a contrast of at least 4.5:1 on their backgrounds.
const STYLE = `
*,*::before,*::after{box-sizing:border-box}
[hidden]{display:none !important}
body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1b1b1f;background:#f6f6f8;overflow-wrap:break-word}
a{color:#0b57c2}a:hover{color:#083f8f}
:focus-visible{outline:3px solid #0b57c2;outline-offset:2px}
.skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5rem 1rem;z-index:1}.skip:focus{left:.5rem}
header{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;padding:.6rem 1.25rem;background:#fff;border-bottom:1px solid #ddd}
header .brand{font-weight:700;color:#1b1b1f;text-decoration:none;font-size:1.1rem}
header nav ul{display:flex;flex-wrap:wrap;gap:.25rem 1rem;list-style:none;margin:0;padding:0}
header .who{margin-left:auto;color:#555;font-size:.9em;overflow-wrap:anywhere}
header form{margin:0}header form button{margin:0;padding:.3rem .8rem}
.frame{max-width:44rem;margin:1.5rem auto;padding:0 1rem}.frame.wide{max-width:76rem}
.frame.with-side{display:grid;grid-template-columns:minmax(0,1fr);gap:1rem}
@media (min-width:52rem){.frame.with-side{grid-template-columns:13rem minmax(0,1fr);align-items:start}}
main{min-width:0;padding:1.25rem 1.5rem;background:#fff;border:1px solid #ddd;border-radius:8px}
@media (max-width:30rem){main{padding:1rem .85rem}.frame{padding:0 .5rem;margin:.75rem auto}}
h1{margin:.2rem 0 1rem;font-size:1.6rem;line-height:1.25}
h2{margin:2rem 0 .75rem;padding-top:1rem;border-top:1px solid #eee;font-size:1.3rem}h2:first-child,h1+h2{border-top:0;padding-top:0}
h3{margin:1.5rem 0 .5rem;font-size:1.1rem}h4{margin:.25rem 0 .5rem;overflow-wrap:anywhere}
nav.side ul{list-style:none;margin:0;padding:.5rem;background:#fff;border:1px solid #ddd;border-radius:8px;display:flex;flex-wrap:wrap;gap:.25rem}
@media (min-width:52rem){nav.side ul{flex-direction:column}}
nav.side a{display:block;padding:.35rem .65rem;border-radius:6px;text-decoration:none;color:#1b1b1f}
nav.side a:hover{background:#f0f2f7}nav.side a[aria-current=page]{background:#e6eefb;color:#083f8f;font-weight:600}
label{display:block;margin:.75rem 0 .25rem;font-weight:600}
input[type=email],input[type=password],input[type=text],input[type=url],input[type=datetime-local],select,textarea{width:100%;max-width:100%;padding:.5rem;font:inherit;border:1px solid #767676;border-radius:4px}
input[type=number]{width:7rem;padding:.5rem;font:inherit;border:1px solid #767676;border-radius:4px}
textarea{font-family:ui-monospace,monospace;min-height:4.5rem}
input[readonly]{background:#f3f3f6;font-family:ui-monospace,monospace}
input[type=checkbox]{width:1.1rem;height:1.1rem;margin:0;flex:none}
button,.button{display:inline-block;font:inherit;padding:.45rem 1.1rem;margin:1rem .5rem 0 0;cursor:pointer;border-radius:6px;border:1px solid #8a8f98;background:#fff;color:#1b1b1f;text-decoration:none;line-height:1.4}
button:hover,.button:hover{background:#f0f2f7}
button.primary,.button.primary{background:#0b57c2;border-color:#0b57c2;color:#fff;font-weight:600}button.primary:hover{background:#083f8f}
button.danger,.button.danger{background:#b3261e;border-color:#b3261e;color:#fff;font-weight:600}button.danger:hover{background:#8c1d18}
button.link{border:0;background:none;color:#0b57c2;text-decoration:underline;padding:0}
.buttons{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin-top:1rem}.buttons button,.buttons .button{margin:0}
.error{color:#a30000;background:#fff0f0;padding:.5rem .75rem;border-radius:4px}
.notice{color:#0b5a1f;background:#eefaf0;padding:.5rem .75rem;border-radius:4px}
.muted{color:#5c5c66;font-size:.9em}
.danger-text,.danger{color:#a30000}
dt{font-weight:600}dd{margin:0 0 .5rem 1rem;overflow-wrap:anywhere}dl.scopes dt{font-family:ui-monospace,monospace}
form.inline{display:inline}form.inline button{margin:0}
.scroll{overflow-x:auto;max-width:100%;position:relative}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.45rem .5rem;border-bottom:1px solid #e4e4e8;vertical-align:top}
th{font-size:.9em;color:#3d3d45;white-space:nowrap}
td code,time{white-space:nowrap;overflow-wrap:normal}td a code{white-space:normal;overflow-wrap:anywhere}
td form{margin:0}td button{margin:0;padding:.25rem .7rem}
.cells{display:flex;flex-wrap:wrap;gap:.35rem;align-items:center}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f6f8;padding:.5rem;border-radius:4px;max-width:100%}
code,.mono{font-family:ui-monospace,monospace;font-size:.9em;overflow-wrap:anywhere}
fieldset{border:1px solid #ddd;border-radius:6px;margin:.75rem 0;padding:.5rem 1rem;min-width:0}legend{font-weight:600;padding:0 .25rem}
.choice{display:flex;gap:.5rem;align-items:flex-start;margin:.35rem 0}.choice input{margin-top:.2rem}
.choice label{display:inline;margin:0;font-weight:600;font-family:ui-monospace,monospace}.choice{flex-wrap:wrap}.choice .muted{flex:1 1 12rem}
.choices{display:grid;grid-template-columns:repeat(auto-fill,minmax(14rem,1fr));gap:.15rem 1rem}
label.check,.check{display:flex;gap:.5rem;align-items:center;margin:.3rem 0;font-weight:400}.check label{display:inline;margin:0;font-weight:400}
.once{border:2px solid #b36b00;background:#fff8ec;border-radius:8px;padding:.75rem 1rem;margin:1rem 0}
.copyrow{display:flex;gap:.5rem;align-items:center}.copyrow button{margin:0}
.card{border:1px solid #ddd;border-radius:8px;padding:.75rem 1rem;margin:1rem 0;min-width:0}
.card h2{margin:.25rem 0 .5rem;padding-top:0;border-top:0}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(15rem,1fr));gap:1rem}.cards .card{margin:0}
.actions{display:flex;flex-wrap:wrap;gap:.75rem;align-items:flex-end}.actions form{margin:0}.actions button{margin:.5rem 0 0}
.actions form label{margin-top:0}
.badge{display:inline-block;padding:0 .5rem;border-radius:1rem;font-size:.85em;background:#ececf0;white-space:nowrap}.badge.ok{background:#dcf3e0;color:#0b5a1f}.badge.off{background:#fde3e3;color:#8c1d18}
details>summary{cursor:pointer}
.summary-line{display:inline-block;max-width:min(22rem,calc(100% - 1.5em));vertical-align:bottom;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
td.error-cell{min-width:14rem}
figure{margin:1rem 0}figcaption{font-size:.9em;color:#3d3d45}
svg.chart{display:block;width:100%;height:auto;max-width:44rem}
.legend{display:flex;flex-wrap:wrap;gap:1rem;font-size:.9em;margin:.25rem 0}.swatch{display:inline-block;width:.8rem;height:.8rem;border-radius:2px;margin-right:.3rem;vertical-align:-.05rem}
.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}
footer{text-align:center;color:#5c5c66;font-size:.85em;margin:1rem 0 2rem}
`;

/** The frame of every server-rendered page. Everything interpolated is escaped by `html`. */
export function page(o: PageOptions): SafeHtml {
  const frame = ['frame', o.wide || o.side ? 'wide' : '', o.side ? 'with-side' : ''].filter(Boolean).join(' ');
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${o.title} · svc</title>
<style>${STYLE}</style>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header><a class="brand" href="/">svc</a>${
    o.signedIn
      ? html`<nav aria-label="Settings"><ul><li><a href="/settings/developer">Developer settings</a></li><li><a href="/settings/apps">Apps and agents</a></li></ul></nav>
<span class="who">Signed in as ${o.signedIn.email}</span>
<form method="post" action="/logout"><input type="hidden" name="csrf" value="${o.signedIn.csrf}"><button type="submit">Sign out</button></form>`
      : html`<nav aria-label="Site"><ul><li><a href="/docs">API reference</a></li><li><a href="/login">Sign in</a></li></ul></nav>`
  }</header>
<div class="${frame}">
${o.side ?? null}
<main id="main">
<h1>${o.title}</h1>
${o.body}
</main>
</div>
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

/** A plain error page (bad authorization request, failed CSRF check, …) with a way back home. */
export function sendErrorPage(res: Response, status: number, title: string, message: string): void {
  sendPage(
    res,
    status,
    page({ title, body: html`<p class="error" role="alert">${message}</p><p><a href="/">Go to the home page</a></p>` }),
  );
}
