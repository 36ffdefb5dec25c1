import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { headersAtWriteHead, mergeHeaders, writeHeadAtOnce } from '../../src/http/apiHeaders.js';

/** Serves one response written by `write` and returns the headers a client sees. */
async function headersOf(write: (res: ServerResponse) => void): Promise<Headers> {
  const server = createServer((_req, res) => write(res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const r = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    await r.text();
    return r.headers;
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
}

describe('headersAtWriteHead', () => {
  it('adds its headers to a writeHead with a headers object; the writer and earlier setHeader calls win', async () => {
    const h = await headersOf((res) => {
      const pending = headersAtWriteHead(res, { 'X-A': 'pending', 'Content-Type': 'text/plain', 'X-B': 'pending' });
      pending['X-Late'] = 'filled later';
      res.setHeader('x-b', 'set');
      res.writeHead(201, { 'content-type': 'application/json' }).end('{}');
    });
    expect(h.get('x-a')).toBe('pending');
    expect(h.get('x-late')).toBe('filled later');
    expect(h.get('x-b')).toBe('set');
    expect(h.get('content-type')).toBe('application/json');
  });

  it('also applies when headers are written implicitly, with a status message, or as raw pairs', async () => {
    const implicit = await headersOf((res) => {
      headersAtWriteHead(res, { 'X-A': 'pending' });
      res.end('x');
    });
    expect(implicit.get('x-a')).toBe('pending');
    const reason = await headersOf((res) => {
      headersAtWriteHead(res, { 'X-A': 'pending' });
      res.writeHead(200, 'Fine').end();
    });
    expect(reason.get('x-a')).toBe('pending');
    const raw = await headersOf((res) => {
      headersAtWriteHead(res, { 'X-A': 'pending', 'X-C': 'pending' });
      res.writeHead(200, ['X-C', 'raw']).end();
    });
    expect(raw.get('x-a')).toBe('pending');
    expect(raw.get('x-c')).toBe('raw');
  });
});

describe('writeHeadAtOnce', () => {
  it('writes the pending headers and its own, its own winning, once; later writes see no pending headers', async () => {
    const h = await headersOf((res) => {
      const pending = headersAtWriteHead(res, { 'X-A': 'pending', 'X-B': 'pending' });
      pending['X-Late'] = 'filled later';
      writeHeadAtOnce(res, 202, { 'X-B': 'given', 'Content-Length': 2 }).end('{}');
    });
    expect(h.get('x-a')).toBe('pending');
    expect(h.get('x-late')).toBe('filled later');
    expect(h.get('x-b')).toBe('given');
    expect(h.get('content-length')).toBe('2');
  });

  it('keeps a header set before (CORS) over a pending one, as the general writeHead does', async () => {
    const h = await headersOf((res) => {
      headersAtWriteHead(res, { 'X-A': 'pending', Vary: 'Origin' });
      res.setHeader('vary', 'Origin, Accept');
      writeHeadAtOnce(res, 200, { 'Content-Type': 'application/json' }).end('{}');
    });
    expect(h.get('x-a')).toBe('pending');
    expect(h.get('vary')).toBe('Origin, Accept');
    expect(h.get('content-type')).toBe('application/json');
  });

  it('is a plain writeHead on a response with nothing pending', async () => {
    const h = await headersOf((res) => writeHeadAtOnce(res, 200, { 'X-Given': '1' }).end());
    expect(h.get('x-given')).toBe('1');
  });
});

describe('mergeHeaders', () => {
  it('copies the sets into one new object, later sets winning, and leaves them unchanged', () => {
    const a = { 'X-A': '1', 'X-B': '1' };
    const b = { 'X-B': '2', 'X-C': '2' };
    const merged = mergeHeaders(a, b, { 'X-C': '3' });
    expect(merged).toEqual({ 'X-A': '1', 'X-B': '2', 'X-C': '3' });
    expect(Object.keys(merged)).toEqual(['X-A', 'X-B', 'X-C']);
    expect(a).toEqual({ 'X-A': '1', 'X-B': '1' });
    expect(b).toEqual({ 'X-B': '2', 'X-C': '2' });
    expect(merged).not.toBe(a);
    expect(mergeHeaders()).toEqual({});
  });
});
