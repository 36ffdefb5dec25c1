import { Pause } from './pause.js';
import type { WakeSignal } from './wakeSignal.js';

/**
 * The longest an idle worker sleeps between two claims by default: after each claim that found nothing, the
 * sleep doubles from the worker's poll interval up to this. A commit of the worker's own process wakes it at
 * once; another process's commit, and a lease left by a crashed worker, are found within this.
 */
export const MAX_IDLE_POLL_MS = 2000;

/**
 * The running part of an outbox worker (webhook deliveries, agent runs): turns until stop(), woken by its
 * runtime's "committed" signal while idle, polling otherwise. The worker says what a turn is (claim, hand
 * the claimed work to its slots) and the loop owns the rest: the abort signal of stop(), the one sleep
 * (until a commit, or until a slot frees), whether a commit came during the last claim, and the drain at
 * the end. An idle loop backs off: each claim that found nothing doubles its sleep, from the poll interval up to
 * a maximum (`MAX_IDLE_POLL_MS` unless the worker says otherwise), never past a time this process scheduled work
 * for (`dueAt`); a claim that found work, or a commit, brings it back to the poll interval.
 */
export class WorkerLoop {
  readonly #abort = new AbortController();
  readonly #pause = new Pause<'commit' | 'slot'>();
  #woken = false;
  /** Claims in a row that found nothing. */
  #emptyClaims = 0;
  /** The earliest time (ms) this process scheduled work for (a retry, a throttled delivery), if any. */
  #dueAt = Infinity;
  #running: Promise<void> | null = null;

  /** Aborted by stop(): attempts in flight listen to it. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get stopping(): boolean {
    return this.#abort.signal.aborted;
  }

  /** Starts turning (once): `turn` until stop(), then `drain` (wait for work in flight). */
  start(committed: WakeSignal, turn: () => Promise<void>, drain: () => Promise<void>): void {
    this.#running ??= (async () => {
      const unsubscribe = committed.listen(() => {
        this.#woken = true;
        this.#emptyClaims = 0;
        this.#pause.wake('commit');
      });
      try {
        while (!this.stopping) await turn();
      } finally {
        unsubscribe();
        await drain();
      }
    })();
  }

  /** Call right before claiming: a commit signalled from here on makes the loop claim again instead of idling. */
  claiming(): void {
    this.#woken = false;
  }

  /** A claim found work: the next idle sleep starts again from the poll interval. */
  worked(): void {
    this.#emptyClaims = 0;
  }

  /** Work this process wrote back for later (a retry, a throttled row) is due at `at` (ms): idle sleeps end by then. */
  dueAt(at: number): void {
    if (at < this.#dueAt) this.#dueAt = at;
  }

  /**
   * After a claim that found less than it wanted (`found` rows): sleeps unless a commit came meanwhile, `ms` after a
   * claim that found work, longer after each that found none (up to `maxMs`, and never past `dueAt`).
   */
  async idle(ms: number, found = 0, maxMs = MAX_IDLE_POLL_MS): Promise<void> {
    if (found > 0) this.#emptyClaims = 0;
    else if (this.#emptyClaims < 30) this.#emptyClaims++;
    if (this.#woken || this.stopping) return;
    const now = Date.now();
    if (this.#dueAt <= now) this.#dueAt = Infinity; // passed: the claim just made has seen it
    const backedOff = found > 0 ? ms : Math.min(ms * 2 ** (this.#emptyClaims - 1), Math.max(ms, maxMs));
    await this.#pause.sleep(Math.max(0, Math.min(backedOff, this.#dueAt - now)), 'commit');
  }

  /** Sleeps up to `ms` for a slot to free (slotFreed() ends it). */
  waitForSlot(ms: number): Promise<void> {
    return this.#pause.sleep(ms, 'slot');
  }

  slotFreed(): void {
    this.#pause.wake('slot');
  }

  /** Stops turning: aborts `signal`, ends any sleep, runs `onAbort` (cut other waits short), waits for the drain. */
  async stop(onAbort?: () => void): Promise<void> {
    this.#abort.abort();
    this.#pause.wakeAll();
    onAbort?.();
    await this.#running;
  }
}
