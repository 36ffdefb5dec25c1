// The part of proxy-addr (Express's own reader of `req.ip`) that src/app.ts calls; the package ships no types.
declare module 'proxy-addr' {
  import type { IncomingMessage } from 'node:http';
  /** Whether the address `addr`, at position `i` counting from the socket, is a trusted proxy. */
  type Trust = (addr: string, i: number) => boolean;
  /** The client's address: the farthest one a chain of trusted proxies vouches for. */
  export default function proxyaddr(req: IncomingMessage, trust: Trust): string | undefined;
}
