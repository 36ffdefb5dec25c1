import { randomFillSync } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
let lastTime = 0;
let lastTimeText = '';
let lastRandom: number[] = [];
/**
 * Random bytes drawn 16 at a time from one 4 KiB fill of the CSPRNG, so one call into it serves 256 ids: a call
 * into the CSPRNG costs far more than a copy, and one per event id showed in a POST's CPU (bench/README.md). Each
 * byte is handed out once, as Node's own `randomUUID` does with its cache.
 */
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

/** The offset in `pool` of 16 fresh random bytes, refilling the pool when it is spent. */
function take16(): number {
  if (poolAt + 16 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += 16;
  return at;
}

function randomDigits(): number[] {
  const at = take16();
  const digits = new Array<number>(16);
  for (let i = 0; i < 16; i++) digits[i] = pool[at + i] % 32;
  return digits;
}

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

/**
 * A prefixed, time-ordered identifier (`room_01J…`): a ULID after the prefix. Ids sort in creation order,
 * which keyset pagination relies on; within one millisecond the random part is incremented (monotonic).
 */
export function newId(prefix: string, now: number = Date.now()): string {
  if (now <= lastTime) {
    // increment the random part so ids made in the same millisecond still sort in order
    for (let i = lastRandom.length - 1; i >= 0; i--) {
      if (lastRandom[i] < 31) {
        lastRandom[i]++;
        break;
      }
      lastRandom[i] = 0;
    }
  } else {
    lastTime = now;
    lastTimeText = encodeTime(now);
    lastRandom = randomDigits();
  }
  let id = `${prefix}_${lastTimeText}`;
  for (const n of lastRandom) id += CROCKFORD[n];
  return id;
}

/** Public event id: `evt_` + 16 random bytes as URL-safe base64 (22 characters). */
export function newEventId(): string {
  const at = take16();
  return `evt_${pool.toString('base64url', at, at + 16)}`;
}

export const ID_PATTERN = /^[a-z]+_[0-9A-HJKMNP-TV-Z]{26}$/;

/** The smallest id `prefix` could have been given at `ms` or later: a lower bound for a range of time-ordered ids. */
export const idFloorAt = (prefix: string, ms: number): string => `${prefix}_${encodeTime(Math.max(0, Math.floor(ms)))}`;
