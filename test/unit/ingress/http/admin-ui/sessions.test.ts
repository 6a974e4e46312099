/**
 * The status page's sessions (opaque ids, 12 hours on the injected clock, at most SESSION_MAX)
 * and their cookie.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../../../src/core/clock.js';
import {
  AdminSessions, SESSION_MAX, clearedSessionCookie, sessionCookie, sessionIdOf,
} from '../../../../../src/ingress/http/admin-ui/sessions.js';

const HOUR = 3_600_000;

describe('AdminSessions', () => {
  it('gives each sign-in an opaque random id that keeps its token', () => {
    const sessions = new AdminSessions(new ManualClock());
    const a = sessions.create('ops-token-0123456789');
    const b = sessions.create('ops-token-0123456789');
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(b).not.toBe(a);
    expect(sessions.tokenOf(a)).toBe('ops-token-0123456789');
    expect(sessions.tokenOf('guessed')).toBeNull();
  });

  it('ends a session 12 hours after sign-in', () => {
    const clock = new ManualClock();
    const sessions = new AdminSessions(clock);
    const id = sessions.create('ops-token-0123456789');
    clock.advance(12 * HOUR - 1);
    expect(sessions.tokenOf(id)).toBe('ops-token-0123456789');
    clock.advance(1);
    expect(sessions.tokenOf(id)).toBeNull();
    expect(sessions.size).toBe(0);
  });

  it('ends a session at sign-out', () => {
    const sessions = new AdminSessions(new ManualClock());
    const a = sessions.create('ops-token-0123456789');
    const b = sessions.create('ops-token-0123456789');
    sessions.end(a);
    expect(sessions.tokenOf(a)).toBeNull();
    expect(sessions.tokenOf(b)).toBe('ops-token-0123456789');
  });

  it('keeps at most SESSION_MAX, ending the oldest first', () => {
    const sessions = new AdminSessions(new ManualClock());
    const first = sessions.create('ops-token-0123456789');
    for (let i = 1; i < SESSION_MAX; i++) sessions.create('ops-token-0123456789');
    expect(sessions.tokenOf(first)).toBe('ops-token-0123456789');
    const last = sessions.create('ops-token-0123456789');
    expect(sessions.size).toBe(SESSION_MAX);
    expect(sessions.tokenOf(first)).toBeNull();
    expect(sessions.tokenOf(last)).toBe('ops-token-0123456789');
  });
});

describe('the session cookie', () => {
  it('is HttpOnly, SameSite=Strict, for /admin, 12 hours; Secure with TLS', () => {
    expect(sessionCookie('abc', false)).toBe('smppd_admin=abc; HttpOnly; SameSite=Strict; Path=/admin; Max-Age=43200');
    expect(sessionCookie('abc', true)).toBe('smppd_admin=abc; HttpOnly; SameSite=Strict; Path=/admin; Max-Age=43200; Secure');
    expect(clearedSessionCookie(false)).toBe('smppd_admin=; HttpOnly; SameSite=Strict; Path=/admin; Max-Age=0');
  });

  it('is found among other cookies', () => {
    expect(sessionIdOf('a=1; smppd_admin=xyz; b=2')).toBe('xyz');
    expect(sessionIdOf('smppd_admin_other=1')).toBeUndefined();
    expect(sessionIdOf('smppd_admin=')).toBeUndefined();
    expect(sessionIdOf(undefined)).toBeUndefined();
  });
});
