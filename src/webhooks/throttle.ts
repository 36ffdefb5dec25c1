/**
 * The per-webhook throttle of the delivery worker (`maxDeliveriesPerSecond`), in this worker's memory: the
 * deliveries of a webhook are spaced 1/rate s apart, so no second (any half-open window of 1 s) holds more
 * than `rate` of them. A delivery over the rate is not attempted but given a time at which it fits, and
 * the worker puts it back in the outbox due at that time (no attempt counted, no slot held), so the
 * throttled webhook waits while the others go on. Several workers each apply the rate on their own.
 */
export class DeliveryThrottle {
  /** Per webhook: the earliest time (ms) of its next delivery. */
  private readonly next = new Map<string, number>();

  /**
   * When a delivery to `webhookId` may be attempted: `now` (it is counted now) or a later time (it is
   * counted at that time, so deliveries deferred in one batch get successive times).
   */
  admit(webhookId: string, rate: number | null, now: number): number {
    if (!rate || rate <= 0) return now;
    const at = Math.max(this.next.get(webhookId) ?? now, now);
    this.next.set(webhookId, at + 1000 / rate);
    if (this.next.size > 10_000) this.forgetIdle(now);
    return Math.ceil(at);
  }

  /** Drops webhooks whose next time has passed (they start afresh, as a webhook never seen: the same result). */
  private forgetIdle(now: number): void {
    for (const [id, t] of this.next) if (t <= now) this.next.delete(id);
  }
}
