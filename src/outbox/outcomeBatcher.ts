export interface OutcomeBatcherOptions<T> {
  /** Longest wait for more outcomes before a batch is recorded on its own. */
  windowMs: number;
  /** This many outcomes waiting cut the wait short. */
  max: number;
  /** Writes one batch (one transaction); must not reject. */
  record: (batch: T[]) => Promise<void>;
  /** True once the worker stops: waiting outcomes are recorded at once. */
  stopping: () => boolean;
}

/**
 * Outcomes of finished attempts waiting to be written, in batches rather than one transaction per row: a
 * batch is recorded after at most `windowMs`, at once when `max` are waiting or the worker stops, or taken
 * by the worker's next claim to be written in that claim's transaction. One batch is written at a time.
 */
export class OutcomeBatcher<T> {
  #waiting: T[] = [];
  #recording: Promise<void> | null = null;
  #recordNow: (() => void) | null = null;

  constructor(private readonly o: OutcomeBatcherOptions<T>) {}

  /** Adds a finished attempt's outcome. */
  add(outcome: T): void {
    this.#waiting.push(outcome);
    this.flush();
  }

  /** Takes every waiting outcome (the next claim records them in its own transaction). */
  take(): T[] {
    const taken = this.#waiting;
    this.#waiting = [];
    return taken;
  }

  /** Gives back outcomes that were taken but not written (the claim's transaction failed), ahead of newer ones. */
  giveBack(outcomes: T[]): void {
    if (!outcomes.length) return;
    this.#waiting = outcomes.concat(this.#waiting);
    this.flush();
  }

  /** Ends the current wait at once (stop()). */
  cutShort(): void {
    this.#recordNow?.();
  }

  /** Resolves once nothing is being recorded. */
  async settled(): Promise<void> {
    await this.#recording;
  }

  private flush(): void {
    if (this.#waiting.length >= this.o.max || this.o.stopping()) this.#recordNow?.();
    this.#recording ??= (async () => {
      while (this.#waiting.length) {
        if (this.#waiting.length < this.o.max && !this.o.stopping()) await this.gather();
        await this.o.record(this.take());
      }
      this.#recording = null;
    })();
  }

  /** Waits up to windowMs for more outcomes; cut short once `max` are waiting, or by stop(). */
  private gather(): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#recordNow = null;
        resolve();
      };
      const timer = setTimeout(done, this.o.windowMs);
      this.#recordNow = done;
    });
  }
}
