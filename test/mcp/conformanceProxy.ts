import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback HTTP proxy in front of the test server's /mcp that adds `Authorization: Bearer <token>` to
 * every request that has none: the conformance suite connects as an anonymous client (it has no option for
 * a header), and /mcp answers nothing without a credential. Everything else, the Origin and Host headers
 * included, passes through unchanged both ways.
 */
export async function startAuthProxy(target: string, token: string): Promise<{ url: string } & AsyncDisposable> {
  const to = new URL(target);
  const server: Server = createServer((req, res) => {
    const headers = { ...req.headers };
    headers.authorization ??= `Bearer ${token}`;
    const upstream = request({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.rawHeaders);
      up.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    [Symbol.asyncDispose]: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
