import express, { type Router } from 'express';
import type { Services } from '../domain/services.js';
import { appsPage } from './appsPage.js';
import { authorizeRedirect } from './authorizeRedirect.js';
import { consentPage } from './consentPage.js';
import { mountDeveloperPages } from './developer/developerRoutes.js';
import { formBody } from '../formBody.js';
import { homePage, notFoundPage } from './homePage.js';
import { loginPage } from './loginPage.js';
import { createLoginThrottle } from './loginThrottle.js';
import { logoutPage } from './logoutPage.js';
import { pageErrorHandler } from './pageErrorHandler.js';

export interface WebRouterOptions {
  services: Services;
}

/**
 * The server-rendered pages: the home page /, /login, /logout, /settings/apps, /settings/developer, and the
 * browser's steps of OAuth: /oauth/authorize (a redirect or an error page) and the consent page /oauth/consent;
 * last, the 404 page.
 */
export function createWebRouter({ services }: WebRouterOptions): Router {
  const r = express.Router();
  const form = formBody();
  const login = loginPage({ services, throttle: createLoginThrottle({ ds: services.ds, now: services.now }) });
  const logout = logoutPage({ services });
  const apps = appsPage({ services });
  const consent = consentPage({ services });
  r.get('/', homePage({ services }));
  r.get('/oauth/authorize', authorizeRedirect({ services }));
  r.get('/oauth/consent', consent.show);
  r.post('/oauth/consent', form, consent.answer);
  r.get('/login', login.show);
  r.post('/login', form, login.submit);
  r.get('/logout', logout.show);
  r.post('/logout', form, logout.submit);
  r.post('/logout/everywhere', form, logout.submitEverywhere);
  r.get('/settings/apps', apps.show);
  r.get('/settings/apps/revoke', apps.confirm);
  r.post('/settings/apps/revoke', form, apps.revoke);
  mountDeveloperPages(r, { services, form });
  r.use(notFoundPage());
  r.use(pageErrorHandler(services));
  return r;
}
