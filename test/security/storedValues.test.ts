import { describe, expect, it } from 'vitest';
import { StoredFile } from '../../db/entities/index.js';
import { call, createWorld, startTestServer, type TestServer, type World } from '../helpers/harness.js';
import { postMcp, toolCall } from '../mcp/mcpClient.js';

// Stored values poisoning a response: a file's content type is kept and later sent back as
// a response header, so it is checked as a strict media type (RFC 9110) at upload on every surface, and a
// download never fails because of what a row holds. (Custom webhook headers: test/security/webhooks.test.ts.)

const upload = (t: TestServer, w: World, contentType: string, body = 'hello') =>
  t.fetch(`/v1/rooms/${w.roomId}/files?filename=a.txt`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.key}`, 'content-type': contentType },
    body,
  });

const uploadOverMcp = (t: TestServer, w: World, args: { contentType: string; filename?: string }) =>
  postMcp(
    t,
    toolCall('upload_file', {
      roomId: w.roomId,
      filename: args.filename ?? 'a.txt',
      contentType: args.contentType,
      contentBase64: Buffer.from('hello').toString('base64'),
    }),
    { token: w.key },
  );

const storedFiles = (t: TestServer) => t.rt.ds.getRepository(StoredFile).count();

describe('security: stored values', () => {
  it('response splitting through a stored content type: what is not a strict media type is refused at upload with 400 validation_error on REST, nothing stored', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    // (what a client can put in a request header: Latin-1 bytes, tabs; CR/LF never get past Node's parser)
    for (const contentType of [
      'text/plain; a=\u00e9',
      'text/plain; garbage',
      'text/plain; a=b c',
      'text/plain; a=1; A=2',
      'text/plain; a="unterminated',
      'text/html, text/plain',
      'text/plain;\ta=b',
      'text/plain; a=b\u0085',
      'text / plain',
      'text/plain/x',
      '"text/plain"',
    ]) {
      const r = await upload(t, w, contentType);
      const body: any = await r.json();
      expect(r.status, contentType).toBe(400);
      expect(body.error, contentType).toMatchObject({ code: 'validation_error', requestId: expect.any(String) });
    }
    expect(await storedFiles(t)).toBe(0);
    // a strict media type is stored normalized (type and parameter names lower-cased, `; name=value`)
    const ok = await upload(t, w, 'Text/Plain;Charset=UTF-8; Format="flowed"');
    expect(ok.status).toBe(201);
    expect(((await ok.json()) as { contentType: string }).contentType).toBe('text/plain; charset=UTF-8; format=flowed');
    expect((await upload(t, w, 'application/vnd.a+json; profile="https://x.example/p; v=1"')).status).toBe(201);
  });

  it('response splitting through a stored content type: CR/LF, control and non-Latin-1 characters are refused by the MCP upload tool, nothing stored', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    for (const contentType of [
      'text/plain\r\nX-Injected: yes',
      'text/plain; a=b\r\nX-Injected: yes',
      'text/plain; x=\u20ac',
      'text/plain; x="\u20ac"',
      'text/plain; x=\u0001',
      'text/plain; x="a\u0007b"',
      'text/plain\u2028',
      'text/plain; x="\ud83d\ude00"',
      'text/plain;\tx=y',
      'text/plain; a=\u00e9',
    ]) {
      const r = await uploadOverMcp(t, w, { contentType });
      expect(r.body.result.isError, JSON.stringify(contentType)).toBe(true);
      expect(JSON.parse(r.body.result.content[0].text)).toMatchObject({ error: { code: 'validation_error' } });
    }
    // a file name that is not well-formed Unicode would break the download's Content-Disposition
    const r = await uploadOverMcp(t, w, { contentType: 'text/plain', filename: 'a\ud800.txt' });
    expect(r.body.result.isError).toBe(true);
    expect(JSON.parse(r.body.result.content[0].text)).toMatchObject({ error: { code: 'validation_error' } });
    expect(await storedFiles(t)).toBe(0);
    const ok = await uploadOverMcp(t, w, { contentType: 'text/plain; charset="utf-8"' });
    expect(ok.body.result.structuredContent).toMatchObject({ contentType: 'text/plain; charset=utf-8' });
  });

  it('a poisoned stored content type (rows written before uploads were checked) never makes a download answer 500: served as application/octet-stream', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const up = await upload(t, w, 'text/plain');
    const file = (await up.json()) as { id: string };
    const repo = t.rt.ds.getRepository(StoredFile);
    for (const contentType of [
      'text/plain\r\nX-Injected: yes',
      'text/plain; x=\u20ac',
      'text/plain\u0001',
      '',
      'not a media type',
      'text/plain; x="\ud83d\ude00"',
    ]) {
      await repo.update({ id: file.id }, { contentType });
      const dl = await t.fetch(`/v1/rooms/${w.roomId}/files/${file.id}/content`, {
        headers: { authorization: `Bearer ${w.key}` },
      });
      expect(dl.status, JSON.stringify(contentType)).toBe(200);
      expect(dl.headers.get('content-type')).toBe('application/octet-stream');
      expect(dl.headers.get('x-injected')).toBeNull();
      expect(await dl.text()).toBe('hello');
      const meta = await call(t, 'GET', `/v1/rooms/${w.roomId}/files/${file.id}`, { key: w.key });
      expect(meta.status).toBe(200);
      expect(meta.body.contentType).toBe('application/octet-stream');
      const tool = await postMcp(t, toolCall('get_file_content', { roomId: w.roomId, fileId: file.id }), {
        token: w.key,
      });
      expect(tool.body.result.isError ?? false).toBe(false);
      expect(tool.body.result.structuredContent.file.contentType).toBe('application/octet-stream');
    }
    // a valid stored type is served as it was stored
    await repo.update({ id: file.id }, { contentType: 'text/csv; header=present' });
    const dl = await t.fetch(`/v1/rooms/${w.roomId}/files/${file.id}/content`, {
      headers: { authorization: `Bearer ${w.key}` },
    });
    expect(dl.headers.get('content-type')).toBe('text/csv; header=present');
    await dl.arrayBuffer();
  });
});
