import { describe, expect, it } from 'vitest';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { call, createWorld, issueKey, startTestServer, ALL_SCOPES } from '../helpers/harness.js';
import { bodyOf, connectMcp } from './mcpClient.js';

const textOf = (r: Record<string, unknown>) => (r.content as { type: string; text: string }[])[0].text;

describe('MCP results carry content: a compact text, structuredContent as before', () => {
  it('writes a list as a table: no known roomId, no nulls or defaults, author names with a legend, ISO times, and says where it goes on', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const memberKey = (await issueKey(t.rt, { userId: w.member.id, organizationId: w.orgId, scopes: ALL_SCOPES }))
      .token;
    for (const [i, body] of ['first | with a bar', 'second\nwith a newline', 'third'].entries()) {
      expect(
        (await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: i % 2 ? memberKey : w.key, body: { body } }))
          .status,
      ).toBe(201);
    }
    await using c = await connectMcp(t, { token: w.key });
    const page = await c.callTool({ name: 'list_messages', arguments: { roomId: w.roomId, order: 'desc', limit: 2 } });
    const rest = await call(t, 'GET', `/v1/rooms/${w.roomId}/messages?order=desc&limit=2`, { key: w.key });
    // programs: structuredContent is the REST page, unchanged (and the SDK client checked it against the outputSchema)
    expect(page.structuredContent).toEqual(rest.body);
    const text = textOf(page);
    const json = JSON.stringify(page.structuredContent);
    expect(text.length).toBeLessThan(json.length);
    expect(encode(text).length).toBeLessThan(encode(json).length);
    expect(text).not.toContain(w.roomId);
    expect(text).not.toContain('agentRunId');
    expect(text).not.toContain('null');
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^2 items; truncated: more with cursor=\S+;/);
    expect(lines[0]).toContain(`cursor=${rest.body.nextCursor}`);
    expect(lines[0]).toContain('not shown: id (ask with fields)');
    expect(lines[1]).toBe(`users: owner=${w.owner.id}, member=${w.member.id}`);
    const day = rest.body.data[0].createdAt.slice(0, 10);
    expect(lines[2]).toBe(`author|body|createdAt on ${day}`);
    // values that would blur a line are JSON strings; a time keeps ISO 8601 (the day in the heading)
    expect(lines[3]).toBe(`owner|third|${rest.body.data[0].createdAt.slice(11)}`);
    expect(lines[4]).toBe(`member|"second\\nwith a newline"|${rest.body.data[1].createdAt.slice(11)}`);
    const last = await c.callTool({
      name: 'list_messages',
      arguments: { roomId: w.roomId, order: 'desc', limit: 2, cursor: rest.body.nextCursor },
    });
    expect(textOf(last)).toMatch(/^1 item; last page;/);
    expect(textOf(last)).toContain('"first | with a bar"');

    // a single object: compact JSON without nulls nor the arguments, the creator named
    const task = await c.callTool({ name: 'create_task', arguments: { roomId: w.roomId, title: 'Ship it' } });
    const taskText = JSON.parse(textOf(task));
    expect(taskText).not.toHaveProperty('roomId');
    expect(taskText).not.toHaveProperty('assigneeId');
    expect(taskText.createdBy).toBe(`owner (${w.owner.id})`);
    expect(task.structuredContent).toMatchObject({ roomId: w.roomId, assigneeId: null, createdById: w.owner.id });

    // an empty string is left out like a null, in a list and in a single object
    const tasks = await c.callTool({ name: 'list_tasks', arguments: { roomId: w.roomId } });
    expect((tasks.structuredContent as { data: { description: string }[] }).data[0].description).toBe('');
    expect(textOf(tasks)).not.toContain('description');
    expect(JSON.parse(textOf(task))).not.toHaveProperty('description');
  });

  it('takes fields: the text shows those columns in that order; an unknown, hidden or empty field is a clear validation error', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key: w.key, body: { body: 'hello' } });
    await using c = await connectMcp(t, { token: w.key });
    const r = await c.callTool({ name: 'list_messages', arguments: { roomId: w.roomId, fields: 'id, body,authorId' } });
    const data = (r.structuredContent as { data: { id: string }[] }).data;
    const lines = textOf(r).split('\n');
    expect(lines[2]).toBe('id|body|author');
    expect(lines[3]).toBe(`${data[0].id}|hello|owner`);
    expect(r.structuredContent).toEqual((await call(t, 'GET', `/v1/rooms/${w.roomId}/messages`, { key: w.key })).body);

    for (const [fields, problem] of [
      ['body,color', /fields: unknown field "color"/],
      ['passwordHash', /unknown field "passwordHash"/],
      ['email', /unknown field "email"/],
      [' , ', /fields: is empty/],
      [3, /must be a comma-separated string/],
    ] as const) {
      const bad = await c.callTool({ name: 'list_messages', arguments: { roomId: w.roomId, fields } });
      expect(bad.isError, String(fields)).toBe(true);
      const { error } = bodyOf(bad);
      expect(error.code).toBe('validation_error');
      expect(error.message).toMatch(problem);
      expect(error.message).toContain(
        'Valid fields are id, roomId, authorId, postedBy, body, createdAt, agentRunId. Example: "id,roomId,authorId".',
      );
      expect(error.details.valid).toEqual(['id', 'roomId', 'authorId', 'postedBy', 'body', 'createdAt', 'agentRunId']);
    }
    // a tool that is not a list has no fields argument
    const single = await c.callTool({ name: 'get_room', arguments: { roomId: w.roomId, fields: 'name' } });
    expect(bodyOf(single).error).toMatchObject({
      code: 'validation_error',
      message: expect.stringContaining('"fields" is not an argument of get_room; valid ones are roomId.'),
    });
    const tools = new Map((await c.listTools()).tools.map((x) => [x.name, x]));
    expect(tools.get('list_messages')!.inputSchema.properties).toHaveProperty('fields');
    expect(tools.get('get_room')!.inputSchema.properties).not.toHaveProperty('fields');
  });

  it('explains a refused argument with a valid example, a sentence each', async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    await using c = await connectMcp(t, { token: w.key });
    const r = await c.callTool({
      name: 'create_task',
      arguments: { roomId: w.roomId, title: 'x', status: 'later', dueDate: 'tomorrow' },
    });
    expect(bodyOf(r).error.message).toBe(
      'Invalid input: status: Invalid option: expected one of "todo"|"in_progress"|"done"; for example "todo". dueDate: Invalid ISO date; for example "2026-12-01".',
    );
    const g = await c.callTool({ name: 'get_room', arguments: { roomId: 'nope' } });
    expect(bodyOf(g).error.message).toBe(
      'Invalid input: roomId: must be a room_ identifier; for example "room_01KAR3V6X5Q2Z8N4M7P9W1T3YB".',
    );
  });

  it('says when to retry: rate-limit and unit refusals carry retryAfterSeconds', async () => {
    await using t = await startTestServer({ env: { SVC_MONTHLY_UNITS: '3' } });
    const w = await createWorld(t.rt);
    await using c = await connectMcp(t, { token: w.key });
    // (connecting costs nothing; tools/list neither)
    for (let i = 0; i < 3; i++) expect((await c.callTool({ name: 'get_me', arguments: {} })).isError).toBeFalsy();
    const spent = await c.callTool({ name: 'get_me', arguments: {} });
    const { error } = bodyOf(spent);
    expect(error.code).toBe('api_units_exhausted');
    const toReset = Math.ceil((Date.parse(error.details.resetsAt) - Date.now()) / 1000);
    expect(error.details.retryAfterSeconds).toBeGreaterThan(0);
    expect(Math.abs(error.details.retryAfterSeconds - toReset)).toBeLessThan(60);

    await using r = await startTestServer({ env: { SVC_RATE_LIMIT: '2' } });
    const v = await createWorld(r.rt);
    await using d = await connectMcp(r, { token: v.key });
    let limited: any;
    for (let i = 0; i < 4 && !limited; i++) {
      const res = await d.callTool({ name: 'get_me', arguments: {} }).catch(() => null);
      if (res?.isError) limited = bodyOf(res);
    }
    expect(limited.error.code).toBe('rate_limited');
    expect(limited.error.details.retryAfterSeconds).toBeGreaterThan(0);
  });
});
