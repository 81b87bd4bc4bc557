/**
 * Console sessions: a browser signs in once with the admin token (an operator), an API
 * key (a developer of that key's project) or through the identity provider (a user, with
 * their roles) and then holds only a random session id in an
 * HttpOnly cookie. The id is stored hashed; the CSRF token is derived from it, so it
 * needs no storage and cannot be forged without the cookie's value.
 */
import { hash } from 'node:crypto';
import { AppError } from '../shared/errors.js';
import type { Clock } from '../shared/clock.js';
import { randomToken } from '../shared/ids.js';
import { API_KEY_PREFIX, secretsEqual } from '../identity/api-keys.js';
import type { ApiKeyAuthenticator } from '../identity/authenticator.js';
import type { ConsoleSession, SessionStore } from './session-store.port.js';

export interface SignedIn {
  /** The cookie's value: never stored, never logged. */
  sessionId: string;
  csrfToken: string;
  session: ConsoleSession;
}

const sha256 = (text: string): string => hash('sha256', text, 'hex');

export const invalidSignIn = () => new AppError('authentication', 'Invalid credentials', { code: 'invalid_credentials' });
export const signedOut = () => new AppError('authentication', 'Not signed in, or the session has ended', { code: 'session_required' });

export interface ConsoleSessionsDeps {
  store: SessionStore;
  authenticator: ApiKeyAuthenticator;
  adminToken: string | null;
  clock: Clock;
  ttlMs: number;
}

export class ConsoleSessions {
  constructor(private readonly deps: ConsoleSessionsDeps) {}

  /** Opens a session for the admin token or an active API key; 401 for anything else. */
  async signIn(credential: string): Promise<SignedIn> {
    return this.#open(await this.#sessionFor(credential.trim()));
  }

  /** Opens a session for a user (signed in through the identity provider). */
  async signInUser(userId: string): Promise<SignedIn> {
    return this.#open({ role: 'user', projectId: null, keyId: null, userId, expiresAtMs: this.deps.clock.nowMs() + this.deps.ttlMs });
  }

  async #open(session: ConsoleSession): Promise<SignedIn> {
    const sessionId = randomToken(32);
    const now = this.deps.clock.nowMs();
    await this.deps.store.deleteExpired(now);
    await this.deps.store.insert(sha256(sessionId), session, now);
    return { sessionId, csrfToken: csrfTokenOf(sessionId), session };
  }

  /** The live session behind a cookie value, or undefined. */
  async resolve(sessionId: string | undefined): Promise<ConsoleSession | undefined> {
    if (!sessionId) return undefined;
    return this.deps.store.findLive(sha256(sessionId), this.deps.clock.nowMs());
  }

  async signOut(sessionId: string | undefined): Promise<void> {
    if (sessionId) await this.deps.store.delete(sha256(sessionId));
  }

  async #sessionFor(credential: string): Promise<ConsoleSession> {
    const expiresAtMs = this.deps.clock.nowMs() + this.deps.ttlMs;
    const { adminToken } = this.deps;
    if (adminToken !== null && secretsEqual(credential, adminToken)) {
      return { role: 'operator', projectId: null, keyId: null, userId: null, expiresAtMs };
    }
    if (!credential.startsWith(API_KEY_PREFIX)) throw invalidSignIn();
    try {
      const principal = await this.deps.authenticator.authenticate(credential, undefined);
      return { role: 'developer', projectId: principal.projectId, keyId: principal.keyId, userId: null, expiresAtMs };
    } catch (err) {
      if (err instanceof AppError && (err.kind === 'permission' || err.kind === 'authentication')) throw invalidSignIn();
      throw err;
    }
  }
}

/** The CSRF token of a session: a hash of its id under a fixed label (the id is the secret). */
export const csrfTokenOf = (sessionId: string): string => hash('sha256', `sluice-console-csrf\0${sessionId}`, 'base64url');
