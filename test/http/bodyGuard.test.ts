import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { BodyRefusedError, BodyTimeoutError, createBodyGuard, readLimited } from '../../src/readLimited.js';

// src/readLimited.ts: the body guard decides at the end of the turn in which a request arrived (a body that came
// whole with its headers is left alone); a reader may start before that (in the request's own event) or after.
// Either way a body still arriving gets its deadline and counts against its client.

type Reader = 'early' | 'late';
const servers: ReturnType<typeof createServer>[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise((r) => {
          s.closeAllConnections();
          s.close(r);
        }),
    ),
  );
});

/** A server with the guard, answering each body read with its outcome: 200 and the bytes, or the error's name. */
async function guarded(reader: Reader, o: { timeoutMs: number; maxPending: number }): Promise<number> {
  const guard = createBodyGuard({
    timeoutMs: o.timeoutMs,
    maxPendingPerClient: o.maxPending,
    clientOf: () => 'one client',
  });
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    readLimited(req, 1000).then(
      ({ bytes }) => res.end(`read ${bytes.length}`),
      (err: Error) => {
        const status = err instanceof BodyTimeoutError ? 408 : err instanceof BodyRefusedError ? 429 : 499;
        res.writeHead(status, { 'Content-Length': Buffer.byteLength(err.name) }).end(err.name);
      },
    );
  };
  const server = createServer((req, res) => {
    guard(req, res);
    if (reader === 'early') answer(req, res);
    else setTimeout(() => answer(req, res), 20);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

/** Sends `data` on a new connection; the first answer's status line and body (or null once `ms` passed). */
function send(port: number, data: string, ms = 5000): Promise<{ status: number; body: string } | null> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(data));
    let raw = '';
    const timer = setTimeout(() => {
      s.destroy();
      resolve(null);
    }, ms);
    s.on('error', () => undefined);
    s.on('data', (d) => {
      raw += d;
      const [head, body] = raw.split('\r\n\r\n');
      if (
        body !== undefined &&
        /content-length: (\d+)/i.test(head) &&
        Buffer.byteLength(body) >= Number(/content-length: (\d+)/i.exec(head)![1])
      ) {
        clearTimeout(timer);
        s.destroy();
        resolve({ status: Number(raw.slice(9, 12)), body });
      }
    });
  });
}

const request = (length: number, body: string) =>
  `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${length}\r\n\r\n${body}`;

describe('the body guard (src/readLimited.ts)', () => {
  for (const reader of ['early', 'late'] as const) {
    it(`${reader} reader: a whole body is read; a body that stops arriving gets its deadline (408)`, async () => {
      const port = await guarded(reader, { timeoutMs: 300, maxPending: 4 });
      expect(await send(port, request(5, 'hello'))).toEqual({ status: 200, body: 'read 5' });
      expect(await send(port, request(10, 'hel'))).toEqual({ status: 408, body: 'BodyTimeoutError' });
    });

    it(`${reader} reader: bodies still arriving beyond the client's limit are refused (429); a whole one is not`, async () => {
      const port = await guarded(reader, { timeoutMs: 60_000, maxPending: 2 });
      const held = [net.connect(port, '127.0.0.1'), net.connect(port, '127.0.0.1')];
      for (const s of held) {
        s.on('error', () => undefined);
        s.write(request(10, 'hel'));
      }
      let refused: { status: number; body: string } | null = null;
      for (let i = 0; i < 20 && !refused; i++) {
        // (not answered within the second: the two held bodies were not counted yet; this one is given up)
        const r = await send(port, request(10, 'hel'), 1000);
        if (r) refused = r;
      }
      expect(refused).toEqual({ status: 429, body: 'BodyRefusedError' });
      expect(await send(port, request(5, 'hello'))).toEqual({ status: 200, body: 'read 5' });
      for (const s of held) s.destroy();
    });
  }
});

describe('a body that came whole, read after its request was parsed (src/readLimited.ts)', () => {
  it('gives its bytes or the limit verdict, and ends the request so that the connection carries the next', async () => {
    const server = createServer((req, res) => {
      // read once the packet is parsed (the request is complete, its body in the buffer), as /mcp's door reads
      setTimeout(() => {
        const complete = req.complete;
        readLimited(req, 8).then(({ bytes, over }) => {
          // the stream then ends as after any read to its end: the connection can carry the next request
          const answer = () => {
            const text = JSON.stringify({
              complete,
              text: over ? null : bytes.toString(),
              over,
              ended: req.readableEnded,
            });
            res.writeHead(200, { 'Content-Length': Buffer.byteLength(text) }).end(text);
          };
          if (req.readableEnded) answer();
          else req.once('end', answer);
        });
      }, 20);
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const chunked = 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n';
    const answers = await new Promise<string[]>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () =>
        s.write(request(5, 'hello') + request(12, 'hello world!') + chunked + request(0, '')),
      );
      let raw = '';
      s.on('data', (d) => {
        raw += d;
        const answers = raw.split('HTTP/1.1 ').slice(1);
        if (answers.length === 4 && raw.endsWith('}')) {
          s.destroy();
          resolve(answers.map((a) => a.slice(a.indexOf('\r\n\r\n') + 4)));
        }
      });
    });
    expect(answers.map((a) => JSON.parse(a) as unknown)).toEqual([
      { complete: true, text: 'hello', over: false, ended: true },
      { complete: true, text: null, over: true, ended: true },
      { complete: true, text: 'abcde', over: false, ended: true },
      { complete: true, text: '', over: false, ended: true },
    ]);
  });
});
