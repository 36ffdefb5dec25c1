import type { EntityManager } from 'typeorm';
import type { Webhook } from '../../db/entities/index.js';
import { promoteRotationsEndedBy, updateWebhookRow } from '../../db/stores/webhooks.js';
import type { Actor } from '../domain/actor.js';
import { validationError } from '../domain/errors.js';
import type { Services } from '../domain/services.js';
import { iso } from '../domain/time.js';
import { inTransaction } from '../../db/transaction.js';
import { DEFAULT_ROTATION_DAYS, MAX_ROTATION_DAYS } from './constants.js';
import { deliveryDepsFor } from './deliveryDeps.js';
import { decryptSecret, encryptSecret, newWebhookSecret } from './secretBox.js';
import { invalidState, loadWebhook } from './webhookConfig.js';

// Secret rotation: single → rotating (current + next, signed with both) → single again, by hand
// or automatically when the period ends. The period is 7 days by default, at most 90: current and next
// never coexist without an end.

const DAY_MS = 24 * 60 * 60 * 1000;

/** Whether the webhook is rotating at `now` (a rotation whose end has passed counts as completed). */
export const isRotating = (w: Pick<Webhook, 'nextSecretEnc' | 'rotationEndsAt'>, now: Date): boolean =>
  !!w.nextSecretEnc && !!w.rotationEndsAt && w.rotationEndsAt > iso(now);

/**
 * The secrets to sign with at `now`: the current one, and the next one while rotating. When the period has
 * ended the next secret already counts as the only one, even before the promotion is written.
 */
export function effectiveSecrets(
  key: Buffer,
  w: Pick<Webhook, 'secretEnc' | 'nextSecretEnc' | 'rotationEndsAt'>,
  now: Date,
  decrypt: (sealed: string) => string = (sealed) => decryptSecret(key, sealed),
): { current: string; next: string | null } {
  if (w.nextSecretEnc && w.rotationEndsAt) {
    const next = decrypt(w.nextSecretEnc);
    return isRotating(w, now) ? { current: decrypt(w.secretEnc), next } : { current: next, next: null };
  }
  return { current: decrypt(w.secretEnc), next: null };
}

/** Starts a rotation; the next secret is returned here once. 409 `invalid_state` while one is running. */
export async function rotateWebhookSecret(
  s: Services,
  id: string,
  o: { periodDays?: number; actor?: Actor } = {},
): Promise<{ nextSecret: string; rotationEndsAt: string }> {
  const days = o.periodDays ?? DEFAULT_ROTATION_DAYS;
  if (!Number.isInteger(days) || days < 1 || days > MAX_ROTATION_DAYS) {
    throw validationError(`The rotation period is 1 to ${MAX_ROTATION_DAYS} whole days`, {
      field: 'periodDays',
      max: MAX_ROTATION_DAYS,
    });
  }
  const { key } = deliveryDepsFor(s);
  const nextSecret = newWebhookSecret();
  return inTransaction(s, async (m) => {
    const now = s.now();
    await promoteEndedRotations(s, now, m);
    const w = await loadWebhook(m, id, o.actor);
    if (isRotating(w, now)) throw invalidState('A rotation is already in progress; complete it first');
    const rotationEndsAt = iso(new Date(now.getTime() + days * DAY_MS));
    await updateWebhookRow(m, id, {
      nextSecretEnc: encryptSecret(key, nextSecret),
      rotationEndsAt,
      updatedAt: iso(now),
    });
    return { nextSecret, rotationEndsAt };
  });
}

/** Completes a rotation by hand: next becomes current, the old secret is invalid. 409 when none runs. */
export async function completeWebhookRotation(s: Services, id: string, actor?: Actor): Promise<void> {
  await inTransaction(s, async (m) => {
    const w = await loadWebhook(m, id, actor);
    if (!w.nextSecretEnc) throw invalidState('No rotation is in progress');
    await updateWebhookRow(m, id, {
      secretEnc: w.nextSecretEnc,
      nextSecretEnc: null,
      rotationEndsAt: null,
      updatedAt: iso(s.now()),
    });
  });
}

/** Writes the automatic promotion of every rotation whose period has ended (one atomic statement). */
export async function promoteEndedRotations(s: Services, at: Date, m?: EntityManager): Promise<number> {
  const now = iso(at);
  return m ? promoteRotationsEndedBy(m, now) : inTransaction(s, (tx) => promoteRotationsEndedBy(tx, now));
}
