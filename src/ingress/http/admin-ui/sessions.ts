/**
 * Sessions of the status page's login form: an opaque random id in the cookie `smppd_admin`,
 * the admin token it was opened with beside it in memory. Lost on restart (sign in again); each
 * ends 12 hours after sign-in, or at sign-out. Keeping the token, not the admin's name, lets each
 * request match it against admin.tokens as they are now: a token removed or changed (SIGHUP)
 * ends its sessions at once. The cookie is HttpOnly (no script reads it) and SameSite=Strict (no
 * other site's page sends it); the admin guard's CSRF rule covers what SameSite leaves.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../../core/clock.js';

export const SESSION_COOKIE = 'smppd_admin';
/** How long a session lasts from sign-in, seconds (the cookie's Max-Age). */
export const SESSION_SECONDS = 12 * 3_600;
/**
 * Sessions kept at most; past it the oldest ends. Only a valid admin token makes one, so this
 * bounds memory against a script that signs in in a loop, not against strangers.
 */
export const SESSION_MAX = 1_000;

interface Session {
  /** A secret, as admin.tokens holds it; never logged or shown. */
  token: string;
  /** Clock.now() milliseconds. */
  expiresAt: number;
}

export class AdminSessions {
  /** In insertion order: the first is the oldest. */
  readonly #sessions = new Map<string, Session>();

  constructor(private readonly clock: Clock) {}

  /** A new session opened with the admin token `token`; returns its id (256 random bits, base64url). */
  create(token: string): string {
    this.#sweep();
    while (this.#sessions.size >= SESSION_MAX) this.#sessions.delete(this.#sessions.keys().next().value!);
    const id = randomBytes(32).toString('base64url');
    this.#sessions.set(id, { token, expiresAt: this.clock.now() + SESSION_SECONDS * 1000 });
    return id;
  }

  /** The token session `id` was opened with, or null: unknown, ended or expired. */
  tokenOf(id: string): string | null {
    const s = this.#sessions.get(id);
    if (!s) return null;
    if (s.expiresAt <= this.clock.now()) {
      this.#sessions.delete(id);
      return null;
    }
    return s.token;
  }

  end(id: string): void {
    this.#sessions.delete(id);
  }

  get size(): number {
    return this.#sessions.size;
  }

  #sweep(): void {
    const now = this.clock.now();
    for (const [id, s] of this.#sessions) if (s.expiresAt <= now) this.#sessions.delete(id);
  }
}

/** The Set-Cookie of a new session (`secure` with http.tls: the cookie never crosses in clear). */
export function sessionCookie(id: string, secure: boolean): string {
  return `${SESSION_COOKIE}=${id}; HttpOnly; SameSite=Strict; Path=/admin; Max-Age=${SESSION_SECONDS}${secure ? '; Secure' : ''}`;
}

/** The Set-Cookie that removes it. */
export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/admin; Max-Age=0${secure ? '; Secure' : ''}`;
}

/** The session id in a Cookie header, if it has one. */
export function sessionIdOf(cookieHeader: string | undefined): string | undefined {
  if (cookieHeader === undefined) return undefined;
  for (const pair of cookieHeader.split(';')) {
    const eq = pair.indexOf('=');
    if (eq !== -1 && pair.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = pair.slice(eq + 1).trim();
      return value === '' ? undefined : value;
    }
  }
  return undefined;
}
