import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateTypes } from '../../clients/typescript/scripts/generateTypes.js';
import { sharedTestServer } from '../helpers/harness.js';

// The client's committed types are those of the document the server serves. When an operation or a
// schema changes, this fails until `npm run client:generate` is run and its output committed.

describe('clients/typescript/src/schema.ts', () => {
  it('equals the types openapi-typescript generates from the live /v1/openapi.json', { timeout: 60_000 }, async () => {
    await using t = await sharedTestServer();
    const doc = await (await t.fetch('/v1/openapi.json')).json();
    const committed = fs.readFileSync(
      path.resolve(import.meta.dirname, '../../clients/typescript/src/schema.ts'),
      'utf8',
    );
    expect(await generateTypes(doc as object), 'run `npm run client:generate` and commit the result').toBe(committed);
  });
});
