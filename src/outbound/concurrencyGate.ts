/**
 * Concurrency caps for outbound requests that an unauthenticated request can cause (client metadata
 * documents): at most `perKey` at once for one key (an origin) and `total` at once in all. A caller over a
 * cap is refused at once rather than queued, so a burst of requests can neither pile up connections to one
 * host nor wait in an unbounded queue.
 */
export class ConcurrencyGate {
  private readonly active = new Map<string, number>();
  private inFlight = 0;

  constructor(private readonly limits: () => { perKey: number; total: number }) {}

  /** A release function when a place is free for `key` (call it exactly once, when done), else null. */
  tryAcquire(key: string): (() => void) | null {
    const { perKey, total } = this.limits();
    const mine = this.active.get(key) ?? 0;
    if (this.inFlight >= total || mine >= perKey) return null;
    this.inFlight++;
    this.active.set(key, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight--;
      const left = (this.active.get(key) ?? 1) - 1;
      if (left > 0) this.active.set(key, left);
      else this.active.delete(key);
    };
  }
}
