import type { TestServer } from '../helpers/harness.js';

/** A minimal cookie jar: what a browser keeps between the sign-in and consent pages. */
class CookieJar {
  private cookies = new Map<string, string>();
  take(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const i = pair.indexOf('=');
      this.cookies.set(pair.slice(0, i).trim(), pair.slice(i + 1).trim());
    }
  }
  header() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

const hidden = (page: string, name: string) => {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(page);
  if (!m) throw new Error(`no hidden field ${name} on the page:\n${page.slice(0, 2000)}`);
  return m[1]
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');
};

/**
 * Plays the user's browser from an authorization URL: follows /oauth/authorize to the consent screen,
 * signs in on /login when sent there, and answers the consent form. Returns the URL the server finally
 * redirects to (the client's redirect_uri with `code`, `state` and `iss`, or an error).
 */
export async function consentInBrowser(
  t: TestServer,
  authorizationUrl: URL | string,
  user: { email: string; password: string },
  decision: 'allow' | 'deny' = 'allow',
): Promise<URL> {
  const jar = new CookieJar();
  const go = async (url: string, init: RequestInit = {}) => {
    const res = await fetch(new URL(url, t.baseUrl), {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie: jar.header() },
    });
    jar.take(res);
    return res;
  };
  const form = (fields: Record<string, string>) => ({
    method: 'POST',
    body: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(t.baseUrl).origin },
  });
  let res = await go(String(authorizationUrl));
  for (let hops = 0; hops < 10; hops++) {
    if (res.status >= 300 && res.status < 400) {
      const location = new URL(res.headers.get('location')!, t.baseUrl);
      if (location.origin !== new URL(t.baseUrl).origin) return location; // back to the client
      res = await go(location.href);
      continue;
    }
    const page = await res.text();
    if (res.status !== 200) throw new Error(`unexpected ${res.status} page:\n${page.slice(0, 2000)}`);
    if (page.includes('action="/login"')) {
      res = await go(
        '/login',
        form({ csrf: hidden(page, 'csrf'), next: hidden(page, 'next'), email: user.email, password: user.password }),
      );
    } else if (page.includes('action="/oauth/consent"')) {
      res = await go(
        '/oauth/consent',
        form({ csrf: hidden(page, 'csrf'), request: hidden(page, 'request'), decision }),
      );
    } else {
      throw new Error(`unexpected page:\n${page.slice(0, 2000)}`);
    }
  }
  throw new Error('too many redirects');
}
