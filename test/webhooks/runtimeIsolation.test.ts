import { describe, expect, it } from 'vitest';
import { type EventRow, Room } from '../../db/entities/index.js';
import { emitEvent } from '../../src/domain/events.js';
import { inTransaction } from '../../db/transaction.js';
import { configureWebhookDelivery, deliveryDepsFor } from '../../src/webhooks/deliveryDeps.js';
import { createWorld, startTestServer } from '../helpers/harness.js';
import { addWebhook, deliveryRows, startReceiver } from './helpers.js';

// No module-level registries for events. Event observers, the "committed" wake-up signals and
// the delivery overrides hang on the runtime's services, so two runtimes in one process never share them.

describe('two runtimes in one process', () => {
  it('hear only their own events, wake only their own workers and keep their own delivery overrides', async () => {
    await using a = await startTestServer();
    await using b = await startTestServer();
    await using rx = await startReceiver().then((r) => Object.assign(r, { [Symbol.asyncDispose]: () => r.close() }));
    const wa = await createWorld(a.rt);
    await createWorld(b.rt);
    const hook = await addWebhook(a.rt, wa.roomId, rx.url);

    const heard = { a: [] as string[], b: [] as string[] };
    a.rt.services.events.on(async (_m, e: EventRow) => void heard.a.push(e.type));
    b.rt.services.events.on(async (_m, e: EventRow) => void heard.b.push(e.type));
    const woken = { a: 0, b: 0 };
    const stopA = a.rt.services.wake.deliveries.listen(() => woken.a++);
    const stopB = b.rt.services.wake.deliveries.listen(() => woken.b++);
    const timeouts = { connectMs: 1234, responseMs: 5678 };
    configureWebhookDelivery(a.rt.services, { timeouts });

    await inTransaction(a.rt.services, async (m) => {
      const room = await m.findOneByOrFail(Room, { id: wa.roomId });
      await emitEvent(m, {
        type: 'message.created',
        room,
        object: { type: 'message', id: 'msg_1' },
        actor: { kind: 'app', userId: wa.owner.id } as never,
        now: new Date(),
      });
      // inside the transaction: queued, but nobody is woken before the commit
      expect(woken).toEqual({ a: 0, b: 0 });
    });
    stopA();
    stopB();

    expect(heard).toEqual({ a: ['message.created'], b: [] });
    expect(woken).toEqual({ a: 1, b: 0 });
    expect(await deliveryRows(a.rt, hook.id)).toHaveLength(1);
    expect(deliveryDepsFor(a.rt.services).timeouts).toEqual(timeouts);
    expect(deliveryDepsFor(b.rt.services).timeouts).not.toEqual(timeouts);
  });
});
