import fc from 'fast-check';

/** A JSON Schema node as the OpenAPI document and the MCP tools carry it. */
export type Schema = Record<string, any>;

export interface SchemaArbOptions {
  /** Existing identifiers by prefix (`room`, `msg`, …): patterned ids often name a real object. */
  ids: Record<string, string[]>;
  /** Resolves a `$ref` (OpenAPI components); MCP schemas are inline. */
  resolve?: (ref: string) => Schema;
}

/** Strings that have broken parsers, databases and templates elsewhere. */
export const NASTY_STRINGS = [
  '',
  ' ',
  '\t',
  '\u0000',
  'a\u0000b',
  '\uFEFF',
  '\u202E',
  '\u200B',
  '\ud800',
  '\udfff',
  'e\u0301',
  '👩‍👩‍👧‍👦',
  '𝕏',
  'ǅ',
  '../../etc/passwd',
  '..\\..\\boot.ini',
  '%00',
  '%2e%2e%2f',
  '<script>alert(1)</script>',
  '"><img src=x onerror=1>',
  "' OR 1=1 --",
  "Robert'); DROP TABLE messages;--",
  '${jndi:ldap://x}',
  '{{7*7}}',
  '%s%s%s%n',
  'NaN',
  'null',
  'true',
  '-1',
  '1e309',
  '0x10',
  ' 1',
  '__proto__',
  'constructor',
  'toString',
  'room_',
  `room_${'A'.repeat(65)}`,
  'room_ÿ',
  'room_01\u0000',
  'X\r\nX-Injected: 1',
  '2026-02-30',
  '9999-99-99',
  '0000-00-00',
  '-000001-01-01',
];

/** Big strings: they must meet a length limit, never a crash. */
export const HUGE_STRINGS = ['a'.repeat(20_001), '😀'.repeat(6_000), '\u0000'.repeat(3_000), 'é'.repeat(70_000)];

/** Any short string: unicode of every plane, or a known-nasty one. Fits in a URL. */
export const shortNastyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS, 'x'.repeat(1500)) },
);

/** Any string: mostly short unicode, sometimes a known-nasty one, rarely huge. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 9, arbitrary: shortNastyString },
  { weight: 1, arbitrary: fc.constantFrom(...HUGE_STRINGS) },
);

/** Numbers that are valid JSON yet absurd as counts, ids or limits. */
const nastyNumber = fc.oneof(
  fc.constantFrom(0, -0, -1, 1.5, 2 ** 31, 2 ** 53 + 1, -(2 ** 63), 1e308, -1e308, Number.MIN_VALUE),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Any JSON value of the wrong kind for most fields. */
export const junkJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: nastyString },
  { weight: 2, arbitrary: nastyNumber },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}, [null], { '': '' }) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

/** `depth` nested arrays or objects, built as text (JSON.stringify would recurse on the client). */
export function deepJsonText(depth: number, kind: 'array' | 'object', inner = '1'): string {
  return kind === 'array'
    ? `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`
    : `${'{"a":'.repeat(depth)}${inner}${'}'.repeat(depth)}`;
}

const prefixOf = (pattern: string | undefined) => (pattern ? /^\^([a-z]+)_\[/.exec(pattern)?.[1] : undefined);

const isoDate = fc.date({
  min: new Date('1900-01-01T00:00:00Z'),
  max: new Date('2199-12-31T00:00:00Z'),
  noInvalidDate: true,
});

function stringFor(s: Schema, o: SchemaArbOptions): fc.Arbitrary<string> {
  if (s.format === 'date') return isoDate.map((d) => d.toISOString().slice(0, 10));
  if (s.format === 'date-time') return isoDate.map((d) => d.toISOString());
  if (s.contentEncoding === 'base64' || s.format === 'byte')
    return fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b).toString('base64'));
  if (typeof s.pattern === 'string') {
    const matching = fc
      .stringMatching(new RegExp(s.pattern))
      .filter((v) => v.length >= (s.minLength ?? 0) && v.length <= (s.maxLength ?? Infinity));
    const known = o.ids[prefixOf(s.pattern) ?? ''] ?? [];
    return known.length
      ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: matching })
      : matching;
  }
  const min = s.minLength ?? 0;
  const max = Math.min(s.maxLength ?? 60, 60);
  const bounds = { minLength: min, maxLength: Math.max(min, max) };
  return fc
    .oneof(fc.string({ unit: 'grapheme', ...bounds }), fc.string({ unit: 'binary', ...bounds }))
    .map((v) => v.replaceAll('\0', ''))
    .filter((v) => [...v].length >= min && v.trim().length >= Math.min(min, 1));
}

const anyJsonWithoutNul = fc.jsonValue({ maxDepth: 3 }).filter((v) => !JSON.stringify(v).includes('\\u0000'));

/**
 * A fast-check arbitrary of values valid for a JSON Schema (the subset zod emits: type, enum, const,
 * pattern, format, length and range bounds, objects with required keys, arrays, anyOf/oneOf, nullable
 * type arrays). Optional properties come and go.
 */
export function valueFor(schema: Schema | undefined, o: SchemaArbOptions): fc.Arbitrary<unknown> {
  if (!schema || typeof schema !== 'object') return junkJson;
  if (typeof schema.$ref === 'string') return valueFor(o.resolve?.(schema.$ref), o);
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives)) return fc.oneof(...alternatives.map((a: Schema) => valueFor(a, o)));
  if (Array.isArray(schema.type))
    return fc.oneof(...schema.type.map((t: string) => valueFor({ ...schema, type: t }, o)));
  switch (schema.type) {
    case 'string':
      return stringFor(schema, o);
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1_000_000, max: schema.maximum ?? 1_000_000 });
    case 'number':
      return fc.double({
        noNaN: true,
        noDefaultInfinity: true,
        min: schema.minimum ?? -1e6,
        max: schema.maximum ?? 1e6,
      });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(valueFor(schema.items, o), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.min(schema.maxItems ?? 4, 4),
      });
    case 'object': {
      const props: Record<string, Schema> = schema.properties ?? {};
      const model = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, valueFor(v, o)]));
      return fc.record(model, { requiredKeys: (schema.required ?? []).filter((k: string) => k in props) });
    }
    default:
      // any JSON value (a schema without a type, such as an agent run's `output`), but no NUL in any string:
      // the document states that rule for every string, nested ones included
      return anyJsonWithoutNul;
  }
}

/** A valid object with one flaw: a property of the wrong kind, an unknown key, a missing required key. */
export function flawedObject(schema: Schema, o: SchemaArbOptions): fc.Arbitrary<Record<string, unknown>> {
  const keys = Object.keys(schema.properties ?? {});
  const base = valueFor(schema, o).map((v) =>
    v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {},
  );
  const flaws: fc.Arbitrary<Record<string, unknown>>[] = [
    fc.tuple(base, nastyString, junkJson).map(([v, k, j]) => ({ ...v, [k || 'x']: j })),
    fc
      .tuple(base, fc.constantFrom('__proto__', 'constructor', 'prototype', 'hasOwnProperty'))
      .map(([v, k]) =>
        JSON.parse(JSON.stringify(v).replace(/^\{/, `{"${k}":{"polluted":true}${Object.keys(v).length ? ',' : ''}`)),
      ),
  ];
  if (keys.length) {
    flaws.push(fc.tuple(base, fc.constantFrom(...keys), junkJson).map(([v, k, j]) => ({ ...v, [k]: j })));
    flaws.push(
      fc.tuple(base, fc.constantFrom(...keys)).map(([v, k]) => {
        const { [k]: _gone, ...rest } = v;
        return rest;
      }),
    );
  }
  return fc.oneof(...flaws);
}

/** Raw JSON texts no object schema accepts as they are: broken syntax, duplicate keys, other roots. */
export function rawJsonTexts(schema: Schema): fc.Arbitrary<string> {
  const key = Object.keys(schema.properties ?? {})[0] ?? 'name';
  return fc.oneof(
    fc.constantFrom(
      '{',
      '}',
      '{"a":}',
      '{"a" 1}',
      "{'a':1}",
      '{"a":1,}',
      '[1,2',
      'nul',
      'tru',
      '"\\u00"',
      '{"a":"\\ud800"}',
      '{"a":1}{"b":2}',
      '[]',
      '"text"',
      '42',
      'null',
      'true',
      '-0',
      '1e999',
      `{"${key}":"a","${key}":"b"}`,
      `{"${key}":"a","${key}":123}`,
      `{"${key}":null,"${key}":{"x":1}}`,
      '\uFEFF{}',
      ' \n\t{} ',
      '{"__proto__":{"admin":true}}',
    ),
    fc
      .tuple(fc.integer({ min: 33, max: 5000 }), fc.constantFrom('array' as const, 'object' as const))
      .map(([d, k]) => deepJsonText(d, k)),
    fc
      .tuple(fc.integer({ min: 33, max: 200 }), fc.constantFrom('array' as const, 'object' as const))
      .map(([d, k]) => `{"${key}":${deepJsonText(d, k)}}`),
  );
}

/** Bytes that are not UTF-8 inside otherwise well-formed JSON. */
export const brokenUtf8Body = (key: string): fc.Arbitrary<Buffer> =>
  fc
    .constantFrom(
      [0xff],
      [0xfe, 0xff],
      [0xc0, 0xaf],
      [0xed, 0xa0, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
      [0xe2, 0x82],
      [0x80],
    )
    .map((bad) => Buffer.concat([Buffer.from(`{"${key}":"ok`), Buffer.from(bad), Buffer.from('"}')]));

/** Header values fetch can carry (a ByteString: no NUL, CR or LF) that make no sense as keys or ids. */
export const absurdHeaderValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '"',
    '""',
    '"abc"',
    '\xff\xfe',
    'a'.repeat(256),
    'k'.repeat(7000),
    '\t',
    'key with spaces',
    '../../',
    '%00',
    'ÿ'.repeat(40),
  ),
  fc
    .string({ unit: fc.constantFrom(...'abcXYZ019-_.:!~" \t\x80\xa0\xe9\xff'.split('')), maxLength: 300 })
    .map((v) => v.trim()),
  fc.constantFrom('k1', 'k2', 'k3'),
);
