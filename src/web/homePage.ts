import type { NextFunction, Request, Response } from 'express';
import type { Services } from '../domain/services.js';
import { DomainError } from '../domain/errors.js';
import { sendError } from '../http/render.js';
import { requestIdOf } from '../http/requestId.js';
import { REQUEST_ID_IN } from '../http/headers.js';
import { audienceOf, SURFACES } from '../http/surfaces.js';
import { csrfToken } from './csrf.js';
import { html } from './html.js';
import { page, sendPage } from './layout.js';
import { currentUser } from './session.js';

/**
 * `/`: what svc is and where to go from here (sign in, the API reference, the developer settings, the MCP
 * endpoint), for a person who opens the address the start log prints.
 */
export function homePage({ services: s }: { services: Services }) {
  return async (req: Request, res: Response) => {
    const who = await currentUser(s, req);
    const mcp = audienceOf(s.config.baseUrl, 'mcp');
    const body = html`<p>svc is the API server of a team collaboration service: rooms, messages, tasks, meeting records with approvals, files and organizations. Every operation is served twice, as a REST API under <code>/v1</code> and as the tools of an MCP server at <code>/mcp</code>, so apps and AI agents use the same operations under the same rules.</p>
<div class="cards">
${
  who
    ? html`<section class="card" aria-labelledby="home-dev"><h2 id="home-dev">Developer settings</h2><p>API keys, webhooks, MCP clients, agent connectors and your API activity.</p><p><a class="button primary" href="/settings/developer">Open developer settings</a></p></section>`
    : html`<section class="card" aria-labelledby="home-signin"><h2 id="home-signin">Sign in</h2><p>Manage your API keys, webhooks and connected apps in the developer settings.</p><p><a class="button primary" href="/login?next=%2Fsettings%2Fdeveloper">Sign in</a></p></section>`
}
<section class="card" aria-labelledby="home-docs"><h2 id="home-docs">API reference</h2><p>Every <code>/v1</code> operation with its parameters, scopes and errors (OpenAPI 3.1).</p><p><a href="/docs">Read the API reference</a></p></section>
<section class="card" aria-labelledby="home-mcp"><h2 id="home-mcp">MCP endpoint</h2><p>Point an MCP client (an agent, an IDE) at this address; it signs in with OAuth or an API key.</p><p><code>${mcp}</code></p></section>
${
  who
    ? html`<section class="card" aria-labelledby="home-apps"><h2 id="home-apps">Apps and agents</h2><p>The apps and AI agents you allowed to act for you, and your sessions.</p><p><a href="/settings/apps">Review apps and agents</a></p></section>`
    : null
}
</div>`;
    const csrf = who ? csrfToken(s, req, res, who.session) : '';
    sendPage(
      res,
      200,
      page({ title: 'Welcome to svc', body, signedIn: who ? { email: who.user.email, csrf } : undefined }),
    );
  };
}

/** Paths whose unknown addresses answer in the API's JSON envelope, not with the page. */
const MACHINE_PREFIXES = [SURFACES.rest.path, SURFACES.mcp.path, '/oauth', '/.well-known', '/metrics'];

const isMachinePath = (path: string) => MACHINE_PREFIXES.some((p) => path === p || path.startsWith(`${p}/`));

/**
 * The last page route: a styled 404 page that leads home for every unknown address a person may open, and the
 * API's JSON `not_found` for the machine paths (their own routers answer first for what they know).
 */
export function notFoundPage() {
  return (req: Request, res: Response, _next: NextFunction) => {
    if (isMachinePath(req.path)) {
      const requestId = requestIdOf(req.headers[REQUEST_ID_IN] as string | undefined);
      return sendError(res, new DomainError('not_found', 'No such endpoint'), requestId);
    }
    sendPage(
      res,
      404,
      page({
        title: 'Page not found',
        body: html`<p>There is no page at this address. It may have moved, or the link may be mistyped.</p>
<div class="buttons"><a class="button primary" href="/">Go to the home page</a><a class="button" href="/settings/developer">Developer settings</a><a class="button" href="/docs">API reference</a></div>`,
      }),
    );
  };
}
