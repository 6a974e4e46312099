/**
 * The status page's sessions (opaque ids, 12 hours on the injected clock, at most SESSION_MAX),
 * their cookie, and the CSRF rule for what a cookie-signed request may change.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../../../src/core/clock.js';
import { csrfProblem } from '../../../../../src/ingress/http/admin-ui/csrf.js';
import {
  AdminSessions, SESSION_MAX, clearedSessionCookie, sessionCookie, sessionIdOf,
} from '../../../../../src/ingress/http/admin-ui/sessions.js';

const HOUR = 3_600_000;

describe('AdminSessions', () => {
  it('gives each sign-in an opaque random id that names its admin', () => {
    const sessions = new AdminSessions(new ManualClock());
    const a = sessions.create('ops');
    const b = sessions.create('ops');
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(b).not.toBe(a);
    expect(sessions.adminOf(a)).toBe('ops');
    expect(sessions.adminOf('guessed')).toBeNull();
  });

  it('ends a session 12 hours after sign-in', () => {
    const clock = new ManualClock();
    const sessions = new AdminSessions(clock);
    const id = sessions.create('ops');
    clock.advance(12 * HOUR - 1);
    expect(sessions.adminOf(id)).toBe('ops');
    clock.advance(1);
    expect(sessions.adminOf(id)).toBeNull();
    expect(sessions.size).toBe(0);
  });

  it('ends a session at sign-out, and those of an admin whose token was removed', () => {
    const sessions = new AdminSessions(new ManualClock());
    const a = sessions.create('ops');
    const b = sessions.create('night');
    sessions.end(a);
    expect(sessions.adminOf(a)).toBeNull();
    sessions.retain((admin) => admin !== 'night');
    expect(sessions.adminOf(b)).toBeNull();
  });

  it('keeps at most SESSION_MAX, ending the oldest first', () => {
    const sessions = new AdminSessions(new ManualClock());
    const first = sessions.create('ops');
    for (let i = 1; i < SESSION_MAX; i++) sessions.create('ops');
    expect(sessions.adminOf(first)).toBe('ops');
    const last = sessions.create('ops');
    expect(sessions.size).toBe(SESSION_MAX);
    expect(sessions.adminOf(first)).toBeNull();
    expect(sessions.adminOf(last)).toBe('ops');
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

describe('the CSRF rule', () => {
  it('lets through the header X-Smppd-Admin: 1, or a form whose Origin is this Host', () => {
    expect(csrfProblem({ 'x-smppd-admin': '1' })).toBeNull();
    expect(csrfProblem({ origin: 'http://127.0.0.1:8080', host: '127.0.0.1:8080' })).toBeNull();
    expect(csrfProblem({ origin: 'https://smppd.example.net', host: 'SMPPD.example.net' })).toBeNull();
  });

  it('refuses another Origin, none, or the opaque null', () => {
    expect(csrfProblem({ origin: 'http://evil.example', host: '127.0.0.1:8080' })).toMatch(/X-Smppd-Admin: 1/);
    expect(csrfProblem({ host: '127.0.0.1:8080' })).not.toBeNull();
    expect(csrfProblem({ origin: 'null', host: '127.0.0.1:8080' })).not.toBeNull();
    expect(csrfProblem({ origin: 'http://127.0.0.1:8081', host: '127.0.0.1:8080' })).not.toBeNull();
    expect(csrfProblem({ 'x-smppd-admin': '0', origin: 'garbage', host: 'x' })).not.toBeNull();
  });
});
