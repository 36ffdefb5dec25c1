import { Pause } from './pause.js';
import type { WakeSignal } from './wakeSignal.js';

/**
 * The running part of an outbox worker (webhook deliveries, agent runs): turns until stop(), woken by its
 * runtime's "committed" signal while idle, polling otherwise. The worker says what a turn is (claim, hand
 * the claimed work to its slots) and the loop owns the rest: the abort signal of stop(), the one sleep
 * (until a commit, or until a slot frees), whether a commit came during the last claim, and the drain at
 * the end.
 */
export class WorkerLoop {
  readonly #abort = new AbortController();
  readonly #pause = new Pause<'commit' | 'slot'>();
  #woken = false;
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

  /** After a claim that found less than it wanted: sleeps up to `ms` unless a commit came meanwhile. */
  async idle(ms: number): Promise<void> {
    if (!this.#woken && !this.stopping) await this.#pause.sleep(ms, 'commit');
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
