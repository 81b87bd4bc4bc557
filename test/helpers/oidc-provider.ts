/**
 * A real OpenID Connect provider (`oidc-provider`) on loopback, for the console's sign-in
 * tests. Its sign-in page is a one-button form ("Continue as <email>") for the person the
 * test chooses; `signIn` walks the whole flow over HTTP as a browser would (Sluice's start,
 * the provider's authorize, its form, back to Sluice's callback). `tokens` makes its token
 * endpoint misbehave: `forged` signs the ID token with a key it does not publish (same
 * kid), `expired` signs it with its own key but an `exp` in the past.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { SignJWT, decodeJwt, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';

export interface Person {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  groups?: string[];
}

export interface TestIdentityProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Who the next sign-in signs in as. */
  person: Person;
  tokens: 'honest' | 'forged' | 'expired';
  /** Registers Sluice's callback URL (once the server under test has its port) and starts answering. */
  register(redirectUri: string): void;
  close(): Promise<void>;
}

const KID = 'test-key-1';

async function signingKey(): Promise<{ jwk: JWK; privateKey: CryptoKey }> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { jwk: { ...(await exportJWK(privateKey)), kid: KID, alg: 'RS256', use: 'sig' }, privateKey };
}

export async function startIdentityProvider(): Promise<TestIdentityProvider> {
  const real = await signingKey();
  const impostor = await signingKey();
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
  let provider: Provider | null = null;
  const server: Server = createServer((req, res) => void route(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const idp: TestIdentityProvider = {
    issuer,
    clientId: 'sluice-console',
    clientSecret: 'test-client-secret-0123456789abcdef',
    person: { sub: 'alice', email: 'alice@example.com', email_verified: true, name: 'Alice', groups: [] },
    tokens: 'honest',
    register(redirectUri) {
      provider = new Provider(issuer, {
        clients: [{ client_id: idp.clientId, client_secret: idp.clientSecret, redirect_uris: [redirectUri], grant_types: ['authorization_code'], response_types: ['code'] }],
        jwks: { keys: [real.jwk] },
        cookies: { keys: ['test-cookie-key-0123456789'] },
        claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
        scopes: ['openid', 'email', 'profile', 'groups'],
        conformIdTokenClaims: false,
        features: { devInteractions: { enabled: false } },
        interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
        findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => (id === idp.person.sub ? { ...idp.person } : { sub: id }) }),
      });
      handler = provider.callback();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', issuer);
    const interaction = /^\/interaction\/([\w-]+)(\/login)?$/.exec(url.pathname);
    if (interaction && provider) {
      if (!interaction[2]) {
        res.setHeader('content-type', 'text/html; charset=utf-8');
        res.end(`<!doctype html><html lang="en"><title>Test identity provider</title><main><h1>Test identity provider</h1>
<form method="post" action="/interaction/${interaction[1]}/login"><button type="submit">Continue as ${idp.person.email ?? idp.person.sub}</button></form></main></html>`);
        return;
      }
      const details = await provider.interactionDetails(req, res);
      const grant = new provider.Grant({ accountId: idp.person.sub, clientId: idp.clientId });
      grant.addOIDCScope(String(details.params.scope));
      await provider.interactionFinished(req, res, { login: { accountId: idp.person.sub }, consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: false });
      return;
    }
    if (url.pathname === '/token' && idp.tokens !== 'honest') tamperTokenAnswer(res, idp.tokens === 'forged' ? impostor.privateKey : real.privateKey, idp.tokens === 'expired');
    if (!handler) {
      res.statusCode = 503;
      res.end();
      return;
    }
    handler(req, res);
  }
  return idp;
}

/** Re-signs the answer's ID token (with `key`, and expired an hour ago when asked) as the provider writes it. */
function tamperTokenAnswer(res: ServerResponse, key: CryptoKey, expired: boolean): void {
  const end = res.end.bind(res) as (chunk?: unknown) => ServerResponse;
  const setHeader = res.setHeader.bind(res);
  res.setHeader = (name: string, value: number | string | readonly string[]) => (name.toLowerCase() === 'content-length' ? res : setHeader(name, value));
  res.end = ((chunk?: unknown) => {
    void (async () => {
      const answer = JSON.parse(String(chunk)) as { id_token?: string };
      if (answer.id_token) {
        const claims = decodeJwt(answer.id_token);
        const now = Math.floor(Date.now() / 1000);
        const times = expired ? { iat: now - 7200, exp: now - 3600 } : {};
        answer.id_token = await new SignJWT({ ...claims, ...times }).setProtectedHeader({ alg: 'RS256', kid: KID }).sign(key);
      }
      end(JSON.stringify(answer));
    })();
    return res;
  }) as typeof res.end;
}

/** Cookies as a browser keeps them for one site: name → value, from each answer's set-cookie. */
class CookieJar {
  readonly #cookies = new Map<string, string>();
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const value = pair!.slice(at + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.#cookies.delete(pair!.slice(0, at));
      else this.#cookies.set(pair!.slice(0, at), value);
    }
  }
  header(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
  get(name: string): string | undefined {
    return this.#cookies.get(name);
  }
}

export interface WalkedSignIn {
  /** The callback URL the provider sent the browser back to (code and state). */
  callbackUrl: string;
  /** Sluice's cookies at that point (the flow cookie). */
  sluiceCookies: CookieJar;
}

/** Walks from Sluice's start to the provider's redirect back, without following that last redirect. */
export async function walkToCallback(sluiceBaseUrl: string): Promise<WalkedSignIn> {
  const sluiceCookies = new CookieJar();
  const idpCookies = new CookieJar();
  const start = await fetch(`${sluiceBaseUrl}/console/api/session/oidc/start`, { redirect: 'manual' });
  if (start.status !== 302) throw new Error(`start answered ${start.status}: ${await start.text()}`);
  sluiceCookies.take(start);
  let next = start.headers.get('location')!;
  for (let hop = 0; hop < 10; hop++) {
    if (next.startsWith(sluiceBaseUrl)) return { callbackUrl: next, sluiceCookies };
    const isLogin = /\/interaction\/[\w-]+$/.test(new URL(next).pathname);
    const answer = await fetch(isLogin ? `${next}/login` : next, { method: isLogin ? 'POST' : 'GET', redirect: 'manual', headers: { cookie: idpCookies.header() } });
    idpCookies.take(answer);
    const location = answer.headers.get('location');
    if (!location) throw new Error(`the identity provider answered ${answer.status} at ${next}: ${await answer.text()}`);
    next = new URL(location, next).href;
  }
  throw new Error('too many redirects');
}

/** Presents the callback to Sluice with the flow cookie; the answer (a redirect) and Sluice's cookies after it. */
export async function presentCallback(walked: WalkedSignIn, callbackUrl = walked.callbackUrl): Promise<{ location: string; sessionCookie: string | undefined }> {
  const answer = await fetch(callbackUrl, { redirect: 'manual', headers: { cookie: walked.sluiceCookies.header() } });
  if (answer.status !== 302) throw new Error(`callback answered ${answer.status}: ${await answer.text()}`);
  walked.sluiceCookies.take(answer);
  return { location: answer.headers.get('location')!, sessionCookie: walked.sluiceCookies.get('sluice_session') };
}

/** A browser signed in to the console through the provider: its session cookie, CSRF token and the session as `GET /console/api/session` shows it. */
export interface SignedInBrowser {
  /** Where the callback sent the browser. */
  location: string;
  cookie: string;
  csrf: string;
  session: any;
}

/** Signs `person` in through the provider with an honest ID token, the whole flow, and reads the session it opened. */
export async function signInThrough(idp: TestIdentityProvider, sluiceBaseUrl: string, person: Person): Promise<SignedInBrowser> {
  idp.person = person;
  idp.tokens = 'honest';
  const { location, sessionCookie } = await presentCallback(await walkToCallback(sluiceBaseUrl));
  const cookie = `sluice_session=${sessionCookie}`;
  const answer = await fetch(`${sluiceBaseUrl}/console/api/session`, { headers: { cookie } });
  if (answer.status !== 200) throw new Error(`the session answered ${answer.status}: ${await answer.text()}`);
  const session = (await answer.json()) as any;
  return { location, cookie, csrf: session.csrf_token, session };
}
