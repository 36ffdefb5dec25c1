import type { Request, Response } from 'express';
import type { Actor } from '../../domain/actor.js';
import { DomainError } from '../../domain/errors.js';
import type { Services } from '../../domain/services.js';
import {
  API_V2,
  completeWebhookRotation,
  createWebhook,
  DEFAULT_ROTATION_DAYS,
  deleteWebhook,
  findWebhookDelivery,
  listDeliveryAttempts,
  loadWebhook,
  loadWebhookWithRoom,
  MAX_DELIVERIES_PER_SECOND,
  MAX_ROTATION_DAYS,
  parseHeaderLine,
  recoverWebhookDeliveries,
  redeliverWebhookDelivery,
  rotateWebhookSecret,
  sendTestEvent,
  setWebhookActive,
  updateWebhook,
  type SentNow,
} from '../../webhooks/index.js';
import { csrfToken } from '../csrf.js';
import { html } from '../html.js';
import { sendPage } from '../layout.js';
import { confirmView } from './confirmView.js';
import { deliveryView } from './deliveryView.js';
import { actorForRoom, actorForWebhook, type SignedIn } from './developerAccess.js';
import { renderDeveloperPage, signedIn, signedInForm } from './developerPage.js';
import type { DeveloperViewState } from './developerView.js';
import { list, text } from './formFields.js';
import { afterAction, afterWebhookAction, type Notice } from './notices.js';
import { webhookPath } from './developerNav.js';
import type { WebhookFormValues } from './webhooksSection.js';

/** How a refused webhook action reads on the page; anything else (a 5xx) goes to the page error handler. */
function refusal(err: unknown): { status: number; text: string } | null {
  if (!(err instanceof DomainError) || err.status >= 500) return null;
  if (err.code === 'forbidden') {
    return {
      status: 403,
      text: "Only the room's creator or an owner or admin of its organization can manage its webhooks.",
    };
  }
  if (err.code === 'not_found' || err.code === 'room_not_found') return { status: 404, text: `${err.message}.` };
  if (err.code === 'validation_error' && err.details?.field === 'url')
    return { status: 400, text: `This URL cannot receive webhooks: ${err.message}.` };
  return { status: err.status, text: err.message.endsWith('.') ? err.message : `${err.message}.` };
}

/** The throttle field: empty is unlimited; anything but a whole number is refused here, the range by the domain. */
function throttleField(raw: string): number | null {
  const v = raw.trim();
  if (v === '') return null;
  if (!/^\d{1,9}$/.test(v)) {
    throw new DomainError(
      'validation_error',
      `Max deliveries per second is a whole number from 1 to ${MAX_DELIVERIES_PER_SECOND}, or empty for unlimited`,
    );
  }
  return Number(v);
}

/** A `datetime-local` value (no zone: read as UTC, as the page says) or a full ISO 8601 time. */
export function sinceField(raw: string): string {
  const v = raw.trim();
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/.test(v) ? `${v}Z` : v;
}

/** The outcome of a test event as one sentence. */
function testOutcome({ delivery, attempt }: SentNow): { kind: 'error' | 'notice'; text: string } {
  const took = attempt.durationMs === null ? '' : ` in ${attempt.durationMs} ms`;
  if (delivery.state === 'succeeded')
    return { kind: 'notice', text: `Test event sent: the receiver answered ${attempt.statusCode}${took}.` };
  const why =
    attempt.statusCode !== null
      ? `the receiver answered ${attempt.statusCode}${attempt.record?.errorClass ? ` (${attempt.record.errorClass})` : ''}${took}`
      : `no response (${attempt.record?.errorClass ?? attempt.error ?? 'unknown'})${took}`;
  return {
    kind: 'error',
    text: `Test event failed: ${why}. See the new row in the delivery history for the request and response.`,
  };
}

/** What every webhook action works with: the services (the actions keep no other state). */
interface Ctx {
  s: Services;
}
type Handler = (req: Request, res: Response) => Promise<void>;
type WebhookRun = (
  who: SignedIn,
  webhookId: string,
  actor: Actor,
  body: Record<string, unknown>,
) => Promise<string | void>;

const show = (
  c: Ctx,
  req: Request,
  res: Response,
  who: SignedIn,
  webhooks: DeveloperViewState['webhooks'],
  status = 200,
) => renderDeveloperPage(c.s, req, res, who, { webhooks }, status);

/** Re-renders the page with the reason of a refusal; anything else is rethrown (the page error handler's). */
async function refused(c: Ctx, req: Request, res: Response, who: SignedIn, err: unknown, webhookId?: string) {
  const r = refusal(err);
  if (!r) throw err;
  await show(
    c,
    req,
    res,
    who,
    { ...(webhookId !== undefined ? { webhookId } : {}), message: { kind: 'error', text: r.text } },
    r.status,
  );
}

/** Runs a change on one webhook as the user; refused ones re-render the page with the reason. */
async function onWebhook(c: Ctx, req: Request, res: Response, run: WebhookRun): Promise<void> {
  const g = await signedInForm(c.s, req, res);
  if (!g) return;
  const webhookId = text(g.body, 'webhook');
  try {
    const actor = await actorForWebhook(c.s.ds.manager, g.who, webhookId);
    const to = await run(g.who, webhookId, actor, g.body);
    if (to) res.redirect(303, to);
  } catch (err) {
    await refused(c, req, res, g.who, err, webhookId);
  }
}

const simple =
  (c: Ctx, notice: Notice, change: (id: string, actor: Actor) => Promise<unknown>): Handler =>
  (req, res) =>
    onWebhook(c, req, res, async (_who, id, actor) => {
      await change(id, actor);
      return afterWebhookAction(notice, id);
    });

/** A webhook the user manages, with its room, for a confirmation step. */
async function webhookToConfirm(c: Ctx, who: SignedIn, webhookId: string) {
  const actor = await actorForWebhook(c.s.ds.manager, who, webhookId);
  return loadWebhookWithRoom(c.s.ds.manager, webhookId, actor);
}

async function confirmDelete(c: Ctx, req: Request, res: Response, who: SignedIn, webhookId: string) {
  try {
    const { webhook: w, room } = await webhookToConfirm(c, who, webhookId);
    sendPage(
      res,
      200,
      confirmView({
        title: 'Delete webhook?',
        question: html`<p>Delete the webhook to <code>${w.url}</code> of the room <strong>${room.name}</strong>? Its delivery history is deleted and queued deliveries are dropped. This cannot be undone.</p>`,
        action: '/settings/developer/webhooks/delete',
        fields: { webhook: w.id },
        button: 'Delete',
        cancel: webhookPath(w.id),
        csrf: csrfToken(c.s, req, res, who.session),
        email: who.user.email,
      }),
    );
  } catch (err) {
    await refused(c, req, res, who, err);
  }
}

/** The confirmation step of starting or completing a rotation, as its own page (works without JavaScript). */
async function confirmRotation(
  c: Ctx,
  req: Request,
  res: Response,
  who: SignedIn,
  webhookId: string,
  step: 'rotate' | 'complete-rotation',
  periodDays: string,
) {
  try {
    const { webhook: w, room } = await webhookToConfirm(c, who, webhookId);
    const start = step === 'rotate';
    const days = /^\d{1,3}$/.test(periodDays.trim()) ? periodDays.trim() : String(DEFAULT_ROTATION_DAYS);
    sendPage(
      res,
      200,
      confirmView({
        title: start ? 'Start rotation?' : 'Complete rotation?',
        question: start
          ? html`<p>Start rotating the signing secret of the webhook to <code>${w.url}</code> (room <strong>${room.name}</strong>)? A next secret is made and shown once; for ${days} days every delivery is signed with both secrets, then the next one replaces the current one.</p>`
          : html`<p>Complete the rotation of the webhook to <code>${w.url}</code> (room <strong>${room.name}</strong>)? The old secret stops signing deliveries at once: a receiver that still checks only the old secret refuses them.</p>`,
        action: `/settings/developer/webhooks/${step}`,
        fields: { room: w.roomId, webhook: w.id, ...(start ? { periodDays: days } : {}) },
        button: start ? 'Start rotation' : 'Complete rotation',
        cancel: webhookPath(w.id),
        csrf: csrfToken(c.s, req, res, who.session),
        email: who.user.email,
        danger: !start,
      }),
    );
  } catch (err) {
    await refused(c, req, res, who, err);
  }
}

const query = (req: Request, name: string) => (typeof req.query[name] === 'string' ? req.query[name] : '');

/** A GET confirmation step for the signed-in user. */
const confirmStep =
  (c: Ctx, step: (req: Request, res: Response, who: SignedIn) => Promise<void>): Handler =>
  async (req, res) => {
    const who = await signedIn(c.s, req, res);
    if (!who) return;
    await step(req, res, who);
  };

/** The new-webhook form as posted. */
function webhookForm(body: Record<string, unknown>): WebhookFormValues {
  return {
    room: text(body, 'room'),
    url: text(body, 'url').trim(),
    apiVersion: text(body, 'apiVersion') || API_V2,
    headers: text(body, 'headers'),
    eventTypes: list(body, 'eventTypes'),
    maxPerSecond: text(body, 'maxPerSecond'),
  };
}

async function create(c: Ctx, req: Request, res: Response): Promise<void> {
  const g = await signedInForm(c.s, req, res);
  if (!g) return;
  const { who, body } = g;
  const form = webhookForm(body);
  try {
    const headers = form.headers
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter(Boolean)
      .map(parseHeaderLine);
    if (!form.url)
      return await show(
        c,
        req,
        res,
        who,
        { form, message: { kind: 'error', text: 'Enter the URL of your receiver.' } },
        400,
      );
    const actor = await actorForRoom(c.s.ds.manager, who, form.room);
    const { webhook, secret } = await createWebhook(c.s, {
      roomId: form.room,
      url: form.url,
      apiVersion: form.apiVersion,
      headers,
      actor,
      eventTypes: form.eventTypes,
      maxDeliveriesPerSecond: throttleField(form.maxPerSecond),
    });
    c.s.log.info(
      { userId: who.user.id, webhookId: webhook.id, roomId: webhook.roomId },
      'webhook created in developer settings',
    );
    await show(c, req, res, who, {
      once: { title: `Webhook created: deliveries to ${webhook.url} are signed with this secret.`, secret },
    });
  } catch (err) {
    const r = refusal(err);
    if (!r) throw err;
    await show(c, req, res, who, { form, message: { kind: 'error', text: r.text } }, r.status);
  }
}

const completeRotation = (c: Ctx, req: Request, res: Response) =>
  onWebhook(c, req, res, async (who, id, actor, body) => {
    if (text(body, 'confirm') !== 'yes') return confirmRotation(c, req, res, who, id, 'complete-rotation', '');
    await completeWebhookRotation(c.s, id, actor);
    return afterWebhookAction('rotation-completed', id);
  });

const rotate = (c: Ctx, req: Request, res: Response) =>
  onWebhook(c, req, res, async (who, id, actor, body) => {
    if (text(body, 'confirm') !== 'yes')
      return confirmRotation(c, req, res, who, id, 'rotate', text(body, 'periodDays'));
    const raw = text(body, 'periodDays').trim();
    const periodDays = /^\d{1,3}$/.test(raw) ? Number(raw) : NaN;
    if (!(periodDays >= 1 && periodDays <= MAX_ROTATION_DAYS)) {
      throw new DomainError('validation_error', `The rotation period is 1 to ${MAX_ROTATION_DAYS} whole days`);
    }
    const { nextSecret, rotationEndsAt } = await rotateWebhookSecret(c.s, id, { periodDays, actor });
    c.s.log.info(
      { userId: who.user.id, webhookId: id, rotationEndsAt },
      'webhook secret rotation started in developer settings',
    );
    const until = `${rotationEndsAt.slice(0, 16).replace('T', ' ')} UTC`;
    await show(c, req, res, who, {
      webhookId: id,
      once: {
        title: `Rotation started: until ${until} deliveries are signed with both the current secret and this next secret.`,
        secret: nextSecret,
      },
    });
  });

const remove = (c: Ctx, req: Request, res: Response) =>
  onWebhook(c, req, res, async (who, id, actor, body) => {
    if (text(body, 'confirm') !== 'yes') return confirmDelete(c, req, res, who, id);
    await deleteWebhook(c.s, id, actor);
    c.s.log.info({ userId: who.user.id, webhookId: id }, 'webhook deleted in developer settings');
    return afterAction('webhook-deleted', 'webhooks', 'webhooks');
  });

/** Sends a test event now and shows its outcome at once. */
const test = (c: Ctx, req: Request, res: Response) =>
  onWebhook(c, req, res, async (who, id, actor) => {
    const sent = await sendTestEvent(c.s, actor, { webhookId: id });
    c.s.log.info(
      { userId: who.user.id, webhookId: id, statusCode: sent.attempt.statusCode },
      'webhook test event sent in developer settings',
    );
    await show(c, req, res, who, { webhookId: id, message: testOutcome(sent) });
  });

/** GET: one delivery with the exact request and every attempt. */
async function delivery(c: Ctx, req: Request, res: Response, who: SignedIn): Promise<void> {
  try {
    const m = c.s.ds.manager;
    const actor = await actorForWebhook(m, who, query(req, 'webhook'));
    const webhook = await loadWebhook(m, query(req, 'webhook'), actor);
    const found = await findWebhookDelivery(m, webhook.id, query(req, 'delivery'));
    if (!found) throw new DomainError('not_found', 'Delivery not found');
    const attempts = await listDeliveryAttempts(m, found.id);
    sendPage(
      res,
      200,
      deliveryView({
        webhook,
        delivery: found,
        attempts,
        csrf: csrfToken(c.s, req, res, who.session),
        email: who.user.email,
      }),
    );
  } catch (err) {
    await refused(c, req, res, who, err);
  }
}

/** The card's event-type filter and throttle. */
const update = (c: Ctx, req: Request, res: Response) =>
  onWebhook(c, req, res, async (who, id, actor, body) => {
    const w = await updateWebhook(
      c.s,
      id,
      { eventTypes: list(body, 'eventTypes'), maxDeliveriesPerSecond: throttleField(text(body, 'maxPerSecond')) },
      actor,
    );
    c.s.log.info(
      {
        userId: who.user.id,
        webhookId: id,
        eventTypes: w.eventTypes,
        maxDeliveriesPerSecond: w.maxDeliveriesPerSecond,
      },
      'webhook filter and throttle changed in developer settings',
    );
    const events = w.eventTypes?.length ? w.eventTypes.join(', ') : 'every event type';
    const rate = w.maxDeliveriesPerSecond ? `at most ${w.maxDeliveriesPerSecond} per second` : 'no limit per second';
    await show(c, req, res, who, {
      webhookId: id,
      message: { kind: 'notice', text: `Saved: ${w.url} receives ${events}, ${rate}.` },
    });
  });

/** Queues again every delivery that finally failed since the given time. */
const recover = (c: Ctx, req: Request, res: Response) =>
  onWebhook(c, req, res, async (who, id, actor, body) => {
    const since = sinceField(text(body, 'since'));
    const { queued } = await recoverWebhookDeliveries(c.s, actor, { webhookId: id, since });
    c.s.log.info(
      { userId: who.user.id, webhookId: id, since, queued },
      'webhook deliveries recovered in developer settings',
    );
    const text_ = queued
      ? `Recovery started: ${queued} failed ${queued === 1 ? 'delivery was' : 'deliveries were'} queued again; they appear in the delivery history as they are sent.`
      : 'Nothing to recover: no delivery failed since then, or each is already queued or was delivered.';
    await show(c, req, res, who, { webhookId: id, message: { kind: 'notice', text: text_ } });
  });

const redeliver = (c: Ctx, req: Request, res: Response) =>
  onWebhook(c, req, res, async (_who, id, actor, body) => {
    const d = await redeliverWebhookDelivery(c.s, actor, {
      roomId: text(body, 'room'),
      webhookId: id,
      deliveryId: text(body, 'delivery'),
    });
    return afterWebhookAction(d.state === 'succeeded' ? 'redelivered' : 'redelivery-failed', id);
  });

/**
 * The webhook actions of /settings/developer (the one place besides the operator CLI that
 * creates, rotates and deletes webhooks). Each acts as the signed-in user in the room's context, so room
 * RBAC `manage` applies (`requireRoom` inside the webhooks area): the room creator or an org owner/admin.
 */
export function webhookActions({ services: s }: { services: Services }) {
  const c: Ctx = { s };
  return {
    /** GET: the confirmation step of `Start rotation`. */
    confirmRotate: confirmStep(c, (req, res, who) =>
      confirmRotation(c, req, res, who, query(req, 'webhook'), 'rotate', query(req, 'periodDays')),
    ),
    /** GET: the confirmation step of `Complete rotation`. */
    confirmCompleteRotation: confirmStep(c, (req, res, who) =>
      confirmRotation(c, req, res, who, query(req, 'webhook'), 'complete-rotation', ''),
    ),
    create: (req: Request, res: Response) => create(c, req, res),
    activate: simple(c, 'webhook-activated', (id, actor) => setWebhookActive(s, id, true, actor)),
    deactivate: simple(c, 'webhook-deactivated', (id, actor) => setWebhookActive(s, id, false, actor)),
    completeRotation: (req: Request, res: Response) => completeRotation(c, req, res),
    rotate: (req: Request, res: Response) => rotate(c, req, res),
    /** GET: the confirmation step of `Delete`. */
    confirmDelete: confirmStep(c, (req, res, who) => confirmDelete(c, req, res, who, query(req, 'webhook'))),
    delete: (req: Request, res: Response) => remove(c, req, res),
    /** POST: sends a test event now and shows its outcome at once. */
    test: (req: Request, res: Response) => test(c, req, res),
    /** GET: one delivery with the exact request and every attempt. */
    delivery: confirmStep(c, (req, res, who) => delivery(c, req, res, who)),
    /** POST: the card's event-type filter and throttle. */
    update: (req: Request, res: Response) => update(c, req, res),
    /** POST: queues again every delivery that finally failed since the given time. */
    recover: (req: Request, res: Response) => recover(c, req, res),
    redeliver: (req: Request, res: Response) => redeliver(c, req, res),
  };
}
