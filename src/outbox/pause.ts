/**
 * The one sleep of a worker's loop: a timer that a wake-up for the same reason cuts short (a commit signal
 * while it waits for work, a finished attempt while it waits for a free slot). A wake-up while the loop is
 * not sleeping, or sleeping for another reason, is not kept: the loop reads its own flags for that.
 */
export class Pause<Reason extends string = 'wake'> {
  #sleeper: { reason: Reason; done: () => void } | null = null;

  /** Sleeps `ms` at most, or until wake(reason) / wakeAll(). */
  sleep(ms: number, reason: Reason): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#sleeper = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#sleeper = { reason, done };
    });
  }

  /** Ends the sleep if it waits for `reason`. */
  wake(reason: Reason): void {
    if (this.#sleeper?.reason === reason) this.#sleeper.done();
  }

  /** Ends the sleep whatever it waits for (stop()). */
  wakeAll(): void {
    this.#sleeper?.done();
  }
}
