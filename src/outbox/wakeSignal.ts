/**
 * "Work was committed" inside one runtime: the outbox writer notifies after its commit, the workers of the
 * same runtime wake instead of waiting for their next poll. Process-local and per runtime
 * (`Services.wake`): commits of other processes (another server, `svc worker`) are found by polling.
 */
export class WakeSignal {
  readonly #listeners = new Set<() => void>();

  /** Listens until the returned function is called. */
  listen(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /** Wakes every listener. Call only after the commit. */
  notify(): void {
    for (const listener of this.#listeners) listener();
  }
}

/** The wake-up signals of one runtime: delivery rows queued (webhooks), agent runs queued. */
export interface OutboxSignals {
  deliveries: WakeSignal;
  runs: WakeSignal;
}

export const createOutboxSignals = (): OutboxSignals => ({ deliveries: new WakeSignal(), runs: new WakeSignal() });
