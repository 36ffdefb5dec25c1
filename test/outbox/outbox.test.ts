import { afterEach, describe, expect, it, vi } from 'vitest';
import { newLeaseOwner } from '../../src/outbox/leaseOwner.js';
import { OutcomeBatcher } from '../../src/outbox/outcomeBatcher.js';
import { Slots } from '../../src/outbox/slots.js';
import { WakeSignal } from '../../src/outbox/wakeSignal.js';
import { WorkerLoop } from '../../src/outbox/workerLoop.js';

// The outbox machinery both workers share (webhook deliveries, agent runs), each piece on its own.
// Fake timers: nothing here waits for real time.

afterEach(() => void vi.useRealTimers());

describe('outbox machinery', () => {
  it('OutcomeBatcher: records after its window, at once when full or stopping, and lets a claim take what waits', async () => {
    vi.useFakeTimers();
    const batches: number[][] = [];
    let stopping = false;
    const b = new OutcomeBatcher<number>({
      windowMs: 25,
      max: 3,
      record: async (x) => void batches.push(x),
      stopping: () => stopping,
    });
    b.add(1);
    b.add(2);
    await vi.advanceTimersByTimeAsync(10);
    expect(batches).toEqual([]);
    b.add(3); // max waiting: no need to wait out the window
    await b.settled();
    expect(batches).toEqual([[1, 2, 3]]);

    b.add(4);
    expect(b.take()).toEqual([4]); // the next claim writes it in its own transaction
    b.giveBack([4]); // that transaction failed: it is recorded on its own, ahead of newer outcomes
    b.add(5);
    await vi.advanceTimersByTimeAsync(25);
    await b.settled();
    expect(batches).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);

    b.add(6);
    stopping = true;
    b.cutShort();
    await b.settled();
    expect(batches).toEqual([[1, 2, 3], [4, 5], [6]]);
  });

  it('Slots: a slot is free again (and said so) before the result is handed on; drained waits for all', async () => {
    const events: string[] = [];
    const slots = new Slots(() => events.push(`free:${slots.busy}`));
    let finish!: (v: string) => void;
    slots.occupy(new Promise<string>((r) => (finish = r)), (v) => events.push(v));
    slots.occupy(Promise.resolve('quick'), (v) => events.push(v));
    expect(slots.busy).toBe(2);
    await vi.waitFor(() => expect(events).toEqual(['free:1', 'quick']), { timeout: 30_000 });
    const drained = slots.drained().then(() => events.push('drained'));
    finish('slow');
    await drained;
    expect(events).toEqual(['free:1', 'quick', 'free:0', 'slow', 'drained']);
    expect(slots.busy).toBe(0);
  });

  it('WakeSignal and WorkerLoop: a commit wakes an idle loop; one during the claim keeps it from idling; stop drains', async () => {
    vi.useFakeTimers();
    const committed = new WakeSignal();
    const loop = new WorkerLoop();
    const turns: string[] = [];
    let commitDuringClaim = false;
    loop.start(
      committed,
      async () => {
        loop.claiming();
        turns.push('claim');
        if (commitDuringClaim) {
          commitDuringClaim = false;
          committed.notify();
        }
        await loop.idle(60_000);
      },
      async () => void turns.push('drained'),
    );
    await vi.advanceTimersByTimeAsync(0);
    expect(turns).toEqual(['claim']); // idle: nothing due, sleeping until a commit or the poll
    commitDuringClaim = true;
    committed.notify();
    await vi.advanceTimersByTimeAsync(0);
    // woken; the commit signalled during that claim makes it claim once more instead of sleeping
    expect(turns).toEqual(['claim', 'claim', 'claim']);
    await loop.stop();
    expect(turns).toEqual(['claim', 'claim', 'claim', 'drained']);
    expect(loop.signal.aborted).toBe(true);
    committed.notify(); // no listener left
    expect(turns).toHaveLength(4);
  });

  it('WorkerLoop backs off while idle: doubling from the poll interval to its maximum, never past dueAt, reset by a commit or work', async () => {
    vi.useFakeTimers();
    const committed = new WakeSignal();
    const loop = new WorkerLoop();
    const at: number[] = [];
    let found = 0;
    const t0 = Date.now();
    loop.start(
      committed,
      async () => {
        loop.claiming();
        at.push(Date.now() - t0);
        await loop.idle(100, found, 1000);
      },
      async () => undefined,
    );
    await vi.advanceTimersByTimeAsync(3000);
    // claims at 0, then sleeps of 100, 200, 400, 800 and the maximum, 1000
    expect(at).toEqual([0, 100, 300, 700, 1500, 2500]);
    // a commit of this process: a claim at once, and the poll interval again
    committed.notify();
    await vi.advanceTimersByTimeAsync(0);
    expect(at.slice(6)).toEqual([3000]);
    await vi.advanceTimersByTimeAsync(150);
    expect(at.slice(6)).toEqual([3000, 3100]);
    // work this process scheduled for later ends a longer sleep at its time
    await vi.advanceTimersByTimeAsync(200); // a sleep of 200: to 3300
    expect(at.slice(6)).toEqual([3000, 3100, 3300]);
    loop.dueAt(t0 + 3750);
    await vi.advanceTimersByTimeAsync(500);
    // after the sleep of 400 (to 3700), the next (800) ends at the due time instead
    expect(at.slice(6)).toEqual([3000, 3100, 3300, 3700, 3750]);
    // a claim that found work: the poll interval again (after the sleep from 3750, the maximum)
    found = 1;
    await vi.advanceTimersByTimeAsync(1050); // to 4900
    expect(at.slice(11)).toEqual([4750, 4850]);
    await loop.stop();
    vi.useRealTimers();
  });

  it('lease owners are unique and name their host, process and kind', () => {
    const a = newLeaseOwner();
    const b = newLeaseOwner('run');
    expect(a).not.toBe(newLeaseOwner());
    expect(a).toMatch(new RegExp(`:${process.pid}:[0-9a-f]{8}$`));
    expect(b).toMatch(new RegExp(`:${process.pid}:run:[0-9a-f]{8}$`));
  });
});
