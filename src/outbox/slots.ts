/**
 * The attempts a worker has in flight: each occupies a slot until its work settles, and the slot is given
 * back (with `onFree`, to wake a loop waiting for room) before the work's result is handed on.
 */
export class Slots {
  readonly #inFlight = new Set<Promise<void>>();

  constructor(private readonly onFree: () => void = () => {}) {}

  /** Slots taken. */
  get busy(): number {
    return this.#inFlight.size;
  }

  /** Takes a slot for `work`; `then` gets its result once the slot is free again. `work` must not reject. */
  occupy<T>(work: Promise<T>, then: (result: T) => void = () => {}): void {
    const p: Promise<void> = work.then((result) => {
      this.#inFlight.delete(p);
      this.onFree();
      then(result);
    });
    this.#inFlight.add(p);
  }

  /** Resolves once every work taken so far has settled. */
  async drained(): Promise<void> {
    await Promise.all(this.#inFlight);
  }
}
