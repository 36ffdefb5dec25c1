import { describe, expect, it } from 'vitest';
import { ID_PATTERN, newId } from '../../src/domain/ids.js';

describe('newId', () => {
  it('makes unique ids that sort in creation order, within one millisecond and across many', () => {
    const now = Date.now() + 10_000; // ahead of any id made before in this process
    const ids = [
      ...Array.from({ length: 600 }, () => newId('aud', now)),
      ...Array.from({ length: 600 }, (_, i) => newId('aud', now + 1 + Math.floor(i / 3))),
    ];
    for (const id of ids) expect(id).toMatch(ID_PATTERN);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    // the random part is not shared between milliseconds
    const randomParts = new Set(ids.map((id) => id.slice(-16)));
    expect(randomParts.size).toBe(ids.length);
  });

  it('keeps an id of an earlier clock reading after the last one (clock stepped back)', () => {
    const a = newId('req', Date.now() + 20_000);
    const b = newId('req', Date.now());
    expect(b > a).toBe(true);
  });
});
