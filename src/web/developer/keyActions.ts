import type { Request, Response } from 'express';
import { findOwnApiKey, issueApiKey, revokeOwnApiKey, type ApiKey } from '../../domain/apiKeys.js';
import { DomainError } from '../../domain/errors.js';
import { SCOPES } from '../../domain/scopes.js';
import type { Services } from '../../domain/services.js';
import { csrfToken } from '../csrf.js';
import { html } from '../html.js';
import { sendPage } from '../layout.js';
import { confirmView } from './confirmView.js';
import { organizationsOf, type SignedIn } from './developerAccess.js';
import { renderDeveloperPage, signedIn, signedInForm } from './developerPage.js';
import { list, text } from './formFields.js';
import type { KeyFormValues } from './keysSection.js';
import { afterAction } from './notices.js';
import { DEVELOPER_PAGES } from './developerNav.js';

const MAX_NAME = 100;

/** A form refused: the keys section again with the form as sent and why. */
const refuse = (
  s: Services,
  req: Request,
  res: Response,
  who: SignedIn,
  form: KeyFormValues,
  text: string,
  status = 400,
) => renderDeveloperPage(s, req, res, who, { keys: { form, message: { kind: 'error', text } } }, status);

const noSuchKey = (s: Services, req: Request, res: Response, who: SignedIn) =>
  renderDeveloperPage(s, req, res, who, { keys: { message: { kind: 'error', text: 'No such API key.' } } }, 404);

/** Asks before revoking one of the user's keys; another user's or an unknown key is 404. */
async function confirmRevoke(s: Services, req: Request, res: Response, who: SignedIn, keyId: string) {
  const key = keyId ? await findOwnApiKey(s.ds.manager, keyId, who.user.id) : null;
  if (!key) return noSuchKey(s, req, res, who);
  if (key.revokedAt) return res.redirect(303, DEVELOPER_PAGES.keys.path);
  sendPage(
    res,
    200,
    confirmView({
      title: 'Revoke API key?',
      question: html`<p>Revoke <strong>${key.name}</strong> (<code>${key.prefix}…${key.last4}</code>)? Every request made with it is refused with 401 from now on. This cannot be undone.</p>`,
      action: '/settings/developer/keys/revoke',
      fields: { key: key.id },
      button: 'Revoke',
      cancel: DEVELOPER_PAGES.keys.path,
      csrf: csrfToken(s, req, res, who.session),
      email: who.user.email,
    }),
  );
}

/** POST: issues a key from the form (the token is in this one response only). */
async function createKey(s: Services, req: Request, res: Response) {
  const g = await signedInForm(s, req, res);
  if (!g) return;
  const { who, body } = g;
  const mode = text(body, 'mode');
  const form: KeyFormValues = {
    name: text(body, 'name').trim(),
    scopes: list(body, 'scopes'),
    mode: mode === 'live' ? 'live' : 'test',
    context: text(body, 'context'),
  };
  if (mode !== 'live' && mode !== 'test') return refuse(s, req, res, who, form, 'Choose the mode: live or test.');
  if (!form.name) return refuse(s, req, res, who, form, 'Give the key a name.');
  if (form.name.length > MAX_NAME)
    return refuse(s, req, res, who, form, `The name is limited to ${MAX_NAME} characters.`);
  if (!form.scopes.length) return refuse(s, req, res, who, form, 'Choose at least one scope.');
  const unknown = form.scopes.filter((sc) => !(SCOPES as readonly string[]).includes(sc));
  if (unknown.length)
    return refuse(
      s,
      req,
      res,
      who,
      { ...form, scopes: form.scopes.filter((sc) => !unknown.includes(sc)) },
      'Unknown scope.',
    );
  const orgs = await organizationsOf(s.ds.manager, who.user.id);
  if (form.context !== 'personal' && !orgs.some((o) => o.id === form.context)) {
    return refuse(
      s,
      req,
      res,
      who,
      { ...form, context: orgs[0]?.id ?? 'personal' },
      'Choose one of your organizations or Personal.',
    );
  }
  let issued: { key: ApiKey; token: string };
  try {
    issued = await issueApiKey(s, {
      userId: who.user.id,
      organizationId: form.context === 'personal' ? null : form.context,
      name: form.name,
      scopes: form.scopes,
      mode,
    });
  } catch (err) {
    if (err instanceof DomainError && err.status < 500) return refuse(s, req, res, who, form, err.message, err.status);
    throw err;
  }
  s.log.info(
    { userId: who.user.id, apiKeyId: issued.key.id, scopes: issued.key.scopes, mode },
    'API key issued in developer settings',
  );
  await renderDeveloperPage(s, req, res, who, { keys: { once: { name: issued.key.name, token: issued.token } } });
}

/** POST: revokes one of the user's keys once confirmed (else asks). */
async function revokeKey(s: Services, req: Request, res: Response) {
  const g = await signedInForm(s, req, res);
  if (!g) return;
  const { who, body } = g;
  const keyId = text(body, 'key');
  if (text(body, 'confirm') !== 'yes') return confirmRevoke(s, req, res, who, keyId);
  try {
    await revokeOwnApiKey(s, keyId, who.user.id);
  } catch (err) {
    if (err instanceof DomainError && err.code === 'not_found') return noSuchKey(s, req, res, who);
    throw err;
  }
  s.log.info({ userId: who.user.id, apiKeyId: keyId }, 'API key revoked in developer settings');
  res.redirect(303, afterAction('key-revoked', 'keys', 'keys'));
}

/**
 * The API key actions of /settings/developer: issue (the token is in this one response only) and
 * revoke after a confirmation step. A user reaches only their own keys: another user's key answers 404.
 */
export function keyActions({ services: s }: { services: Services }) {
  return {
    create: (req: Request, res: Response) => createKey(s, req, res),
    /** GET: the confirmation step of `Revoke`. */
    async confirm(req: Request, res: Response) {
      const who = await signedIn(s, req, res);
      if (!who) return;
      await confirmRevoke(s, req, res, who, typeof req.query.key === 'string' ? req.query.key : '');
    },
    revoke: (req: Request, res: Response) => revokeKey(s, req, res),
  };
}
