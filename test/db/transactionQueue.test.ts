import { describe, expect, it } from 'vitest';
import { inTransaction } from '../../db/transaction.js';
import { Setting } from '../../db/entities/index.js';
import { startTestServer } from '../helpers/harness.js';

/** Waits for a condition without asserting any duration (the test's own timeout bounds it). */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
}

describe('the transaction queue belongs to its DataSource', () => {
  it(
    'a transaction held open on one runtime does not hold up another runtime in the same process; on its own it still queues',
    { timeout: 60_000 },
    async () => {
      await using one = await startTestServer();
      await using two = await startTestServer();
      const order: string[] = [];
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));

      // runtime one: a transaction that stays open until the other runtime's transaction has run
      const first = inTransaction(one.rt.services, async (m) => {
        order.push('one: begin');
        await m.getRepository(Setting).save({ key: 'queue-test', value: 'one' });
        await held;
        order.push('one: end');
      });
      await until(() => order.includes('one: begin'));
      // a second transaction on runtime one waits for the first (one connection, one writer)
      const second = inTransaction(one.rt.services, async () => {
        order.push('one: second');
      });
      // runtime two runs its transaction while runtime one's is open: it commits, and it releases the first
      // (with one queue per process it would wait behind the first, which waits for it: the test would hang)
      const other = await inTransaction(two.rt.services, async (m) => {
        order.push('two');
        await m.getRepository(Setting).save({ key: 'queue-test', value: 'two' });
        release();
        return m.getRepository(Setting).findOneByOrFail({ key: 'queue-test' });
      });
      expect(other.value).toBe('two');
      await Promise.all([first, second]);

      expect(order.filter((x) => x !== 'one: second')).toEqual(['one: begin', 'two', 'one: end']);
      // SQLite queues the transactions of one DataSource; PostgreSQL runs them concurrently
      if (one.rt.ds.options.type !== 'postgres')
        expect(order).toEqual(['one: begin', 'two', 'one: end', 'one: second']);
      expect((await one.rt.ds.getRepository(Setting).findOneByOrFail({ key: 'queue-test' })).value).toBe('one');
      expect((await two.rt.ds.getRepository(Setting).findOneByOrFail({ key: 'queue-test' })).value).toBe('two');
    },
  );
});
