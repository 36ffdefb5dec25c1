import express, { type Router } from 'express';
import type { Services } from '../domain/services.js';
import { appsPage } from './appsPage.js';
import { mountDeveloperPages } from './developer/developerRoutes.js';
import { formBody } from './formBody.js';
import { loginPage } from './loginPage.js';
import { createLoginThrottle } from './loginThrottle.js';
import { logoutPage } from './logoutPage.js';
import { pageErrorHandler } from './pageErrorHandler.js';

export interface WebRouterOptions {
  services: Services;
}

/** The server-rendered pages: /login, /logout, /settings/apps and /settings/developer. */
export function createWebRouter({ services }: WebRouterOptions): Router {
  const r = express.Router();
  const form = formBody();
  const login = loginPage({ services, throttle: createLoginThrottle({ ds: services.ds, now: services.now }) });
  const logout = logoutPage({ services });
  const apps = appsPage({ services });
  r.get('/login', login.show);
  r.post('/login', form, login.submit);
  r.get('/logout', logout.show);
  r.post('/logout', form, logout.submit);
  r.post('/logout/everywhere', form, logout.submitEverywhere);
  r.get('/settings/apps', apps.show);
  r.post('/settings/apps/revoke', form, apps.revoke);
  mountDeveloperPages(r, { services, form });
  r.use(pageErrorHandler(services));
  return r;
}
