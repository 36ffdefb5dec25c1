import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { listProcedures, type ProcedureInfo } from '../../src/procedures/index.js';
import { COMPILED_CHECK, idPatternTest, withoutBoundedLengths } from '../../src/procedures/checkedListOf.js';
import { idOf } from '../../src/procedures/schemas.js';
import { call, createWorld, startTestServer, type TestServer, type World } from '../helpers/harness.js';
import { flawedObject, junkJson, valueFor, type Schema } from '../robustness/fuzzValues.js';

// The list operations of rooms, messages and tasks check their output with a validator compiled from
// the list's JSON Schema instead of zod's parse (checkedListOf.ts). The check must still be a check: what
// it accepts zod accepts, and comes out byte for byte as zod would make it; what it refuses goes to zod (its
// answer, or its error: a 500 "Output validation failed" as before).

type Checked = ProcedureInfo & { output: z.ZodType & { [COMPILED_CHECK]: (v: unknown) => boolean } };
const checked = listProcedures().filter((p): p is Checked => COMPILED_CHECK in p.output);

/** zod's own answer for `v` (safeParse is zod's, untouched), as JSON text, or null when zod refuses it. */
function zodAnswer(p: Checked, v: unknown): string | null {
  const r = p.output.safeParse(v);
  return r.success ? JSON.stringify(r.data) : null;
}

/** What the procedure's output parser (the one tRPC calls) answers, as JSON text, or null when it throws. */
function parserAnswer(p: Checked, v: unknown): string | null {
  try {
    return JSON.stringify(p.output.parse(v));
  } catch (err) {
    expect(Array.isArray((err as { issues?: unknown }).issues), "a refusal is zod's error, with its issues").toBe(true);
    return null;
  }
}

describe('compiled output checks of the list operations', () => {
  it('are on the list operations of rooms, messages, tasks and events', () => {
    expect(checked.map((p) => p.path).sort()).toEqual([
      'events.list',
      'messages.list',
      'rooms.list',
      'rooms.listMembers',
      'tasks.list',
    ]);
  });

  it('agree with zod on generated outputs, valid and flawed', () => {
    for (const p of checked) {
      const doc = z.toJSONSchema(p.output, { io: 'output', target: 'draft-7' }) as Schema;
      const resolve = (ref: string) => (doc.definitions as Record<string, Schema>)[ref.split('/').pop()!];
      const opts = { ids: {}, resolve };
      const item = (doc.properties as Schema).data.items as Schema;
      const itemSchema = item.$ref ? resolve(item.$ref) : item;
      const valid = valueFor(doc, opts) as fc.Arbitrary<{ data: unknown[]; nextCursor: string | null }>;
      const flawed = fc.tuple(valid, flawedObject(itemSchema, opts), fc.nat()).map(([env, bad, at]) => {
        const data = [...env.data];
        data.splice(at % (data.length + 1), 0, bad);
        return { ...env, data };
      });
      const odd = fc.oneof(
        junkJson,
        valid.map((env) => ({ ...env, extra: 1 })),
        valid.map((env) => ({ data: env.data })),
        valid.map((env) => ({ ...env, nextCursor: 7 })),
      );
      fc.assert(
        fc.property(fc.oneof(valid, flawed, odd), (v) => {
          const zod = zodAnswer(p, v);
          const compiled = p.output[COMPILED_CHECK](v);
          if (compiled) {
            // accepted by the compiled check: zod accepts it too, and its output is the very same JSON
            expect(
              zod,
              `${p.path}: compiled accepted what zod refuses: ${JSON.stringify(v).slice(0, 300)}`,
            ).not.toBeNull();
            expect(JSON.stringify(v)).toBe(zod);
          }
          // whatever the path, the parser tRPC calls answers exactly what zod answers
          expect(parserAnswer(p, v)).toBe(zod);
        }),
        { numRuns: 300 },
      );
      // and the generator does reach both sides
      expect(fc.sample(valid, 20).every((v) => p.output[COMPILED_CHECK](v))).toBe(true);
      expect(fc.sample(flawed, 20).some((v) => !p.output[COMPILED_CHECK](v))).toBe(true);
    }
  });
});

describe("an identifier's pattern tested without the regular expression engine", () => {
  it('decides every string as the pattern does, the same string again included', () => {
    const pattern = (z.toJSONSchema(idOf('msg')) as { pattern: string }).pattern;
    const rx = new RegExp(pattern);
    // a fresh test has accepted nothing yet: not even the empty string
    for (const v of ['', 'msg_', '\u0000'])
      expect(idPatternTest('msg', pattern).test(v), JSON.stringify(v)).toBe(false);
    const tester = idPatternTest('msg', pattern);
    const near = [
      '',
      'msg',
      'msg_',
      'msg_a',
      `msg_${'a'.repeat(64)}`,
      `msg_${'a'.repeat(65)}`,
      'msg_01KB\n',
      'msg_01KB\u0660',
      'msg_01KB-2',
      'MSG_01KB',
      'room_01KB',
      'xmsg_01KB',
      'msg__01KB',
      'msg_0１',
      'msg_Zz09',
    ];
    const strings = fc.oneof(
      fc.constantFrom(...near),
      fc.string({
        unit: fc.constantFrom('m', 's', 'g', '_', 'a', 'Z', '0', '9', '-', '\n', 'é', '/', ':', '@', '['),
        maxLength: 70,
      }),
      fc.string({ unit: fc.constantFrom('a', 'B', '7'), maxLength: 68 }).map((t) => `msg_${t}`),
    );
    fc.assert(
      fc.property(fc.array(strings, { maxLength: 8 }), (list) => {
        // in order and each twice: the last accepted value is remembered, and must stay right for the next one
        for (const v of list.flatMap((x) => [x, x])) expect(tester.test(v), JSON.stringify(v)).toBe(rx.test(v));
      }),
      { numRuns: 3000 },
    );
    expect(String(tester)).toBe(`/${pattern}/`);
  });
});

describe("an identifier's length left to its pattern", () => {
  it('drops only a maxLength the id pattern already bounds, and the check still refuses a long id', () => {
    const pattern = (z.toJSONSchema(idOf('msg')) as { pattern: string }).pattern;
    const doc = { properties: { a: { type: 'string', pattern, maxLength: 68 }, b: { type: 'string', maxLength: 68 } } };
    const stricter = { type: 'string', pattern, maxLength: 10 };
    expect(withoutBoundedLengths(doc)).toEqual({
      properties: { a: { type: 'string', pattern }, b: { type: 'string', maxLength: 68 } },
    });
    expect(withoutBoundedLengths(stricter)).toEqual(stricter);
    expect(doc.properties.a.maxLength, 'the schema given is left as it was').toBe(68);
    const messages = checked.find((p) => p.path === 'messages.list')!;
    const row = (id: string) => ({
      id,
      roomId: 'room_1',
      authorId: 'usr_1',
      postedBy: 'user',
      body: 'b',
      createdAt: '2026-11-22T09:30:00.000Z',
      agentRunId: null,
    });
    const page = (id: string) => ({ data: [row(id)], nextCursor: null });
    expect(messages.output[COMPILED_CHECK](page(`msg_${'a'.repeat(64)}`))).toBe(true);
    expect(messages.output[COMPILED_CHECK](page(`msg_${'a'.repeat(65)}`))).toBe(false);
    expect(zodAnswer(messages, page(`msg_${'a'.repeat(65)}`))).toBeNull();
  });
});

describe('list answers over REST are what zod would have made of them', () => {
  let t: TestServer & AsyncDisposable;
  let w: World;
  beforeAll(async () => {
    t = await startTestServer();
    w = await createWorld(t.rt);
  }, 60_000);
  afterAll(() => t?.close());

  it("rooms, members, messages and tasks: same bytes as zod's parse of them", async () => {
    const key = w.key;
    for (let i = 0; i < 3; i++) {
      expect((await call(t, 'POST', '/v1/rooms', { key, body: { name: `Room ${i}` } })).status).toBe(201);
      expect(
        (await call(t, 'POST', `/v1/rooms/${w.roomId}/messages`, { key, body: { body: `Message ${i} ✓` } })).status,
      ).toBe(201);
    }
    const task = await call(t, 'POST', `/v1/rooms/${w.roomId}/tasks`, {
      key,
      body: {
        title: 'Plan',
        description: 'd',
        assigneeId: w.member.id,
        startDate: '2026-12-01',
        dueDate: '2026-12-05',
      },
    });
    expect(task.status).toBe(201);
    expect(
      (
        await call(t, 'PATCH', `/v1/rooms/${w.roomId}/tasks/${task.body.id}`, {
          key,
          body: { status: 'done', dueDate: null },
        })
      ).status,
    ).toBe(200);
    expect((await call(t, 'POST', `/v1/rooms/${w.roomId}/tasks`, { key, body: { title: 'Other' } })).status).toBe(201);

    const byPath = new Map(checked.map((p) => [p.path, p]));
    const lists: [string, string][] = [
      ['rooms.list', '/v1/rooms?limit=2'],
      ['rooms.list', '/v1/rooms'],
      ['rooms.listMembers', `/v1/rooms/${w.roomId}/members`],
      ['messages.list', `/v1/rooms/${w.roomId}/messages?limit=2&order=desc`],
      ['messages.list', `/v1/rooms/${w.roomId}/messages`],
      ['tasks.list', `/v1/rooms/${w.roomId}/tasks`],
    ];
    for (const [path, url] of lists) {
      const res = await t.fetch(url, { headers: { authorization: `Bearer ${key}` } });
      const text = await res.text();
      expect(res.status, `${url}: ${text}`).toBe(200);
      const parsed = JSON.parse(text) as { data: unknown[] };
      expect(parsed.data.length).toBeGreaterThan(0);
      expect(text, url).toBe(zodAnswer(byPath.get(path)!, parsed));
    }
  });
});
