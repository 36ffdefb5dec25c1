import type { Config } from '../../src/config.js';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

const isLoopback = (u: URL) => LOOPBACK_HOSTS.has(u.hostname) || u.hostname.endsWith('.localhost');

/**
 * Which browser origins may call /mcp. The MCP transport spec (Streamable HTTP, "Security Warning") asks
 * servers to validate `Origin` against DNS rebinding: a page on an attacker's host name that resolves to
 * this server must not reach it from a victim's browser. Allowed: the BASE_URL origin, the configured
 * `SVC_MCP_ALLOWED_ORIGINS`, and, when BASE_URL itself is a loopback address (a local development server),
 * any loopback origin such as a local MCP Inspector. A request without `Origin` (not from a browser) passes.
 */
export function createOriginPolicy(
  config: Pick<Config, 'baseUrl' | 'mcpAllowedOrigins'>,
): (origin: string | undefined) => boolean {
  const base = new URL(config.baseUrl);
  const allowed = new Set([base.origin, ...config.mcpAllowedOrigins]);
  const loopbackBase = isLoopback(base);
  return (origin) => {
    if (origin === undefined) return true;
    if (allowed.has(origin)) return true;
    if (!loopbackBase) return false;
    try {
      const u = new URL(origin);
      return /^https?:$/.test(u.protocol) && u.origin === origin && isLoopback(u);
    } catch {
      return false;
    }
  };
}
