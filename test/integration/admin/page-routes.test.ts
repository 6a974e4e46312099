/**
 * The status page's routes on a running daemon, over HTTP (what a browser does, without one):
 * the sign-in form for a stranger, sessions opened by an admin token only, the cookie's
 * attributes, the page's forms posting to the suspend and resume routes under the CSRF rule, and
 * sessions that end at sign-out and when their token leaves the configuration. In headless
 * Chromium: admin-page-browser.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Cleanups } from '../../support/daemon-child.js';
import { recordingLog } from '../../support/http.js';
import { ADMIN_CONFIG, ADMIN_TOKEN, status } from '../routing/admin.js';
import { TOKENS, routingDaemon, smsc, type RoutingDaemon } from '../routing/rig.js';

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function daemon(lines: string[] = []): Promise<RoutingDaemon> {
  const a = await smsc(cleanups);
  const r = await routingDaemon(cleanups, { upstreams: [{ name: 'a', smsc: a }], extra: ADMIN_CONFIG, log: recordingLog(lines) });
  await r.untilAvailable('a');
  return r;
}

interface Answer { status: number; headers: Headers; text: string }

async function request(r: RoutingDaemon, method: 'GET' | 'POST', path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  const res = await fetch(`http://127.0.0.1:${r.d.http.port}${path}`, { method, headers, redirect: 'manual', ...(body !== undefined ? { body } : {}) });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const HTML = { accept: 'text/html' };

/** Signs in with the form; the cookie pair to send back (`smppd_admin=…`). */
async function signIn(r: RoutingDaemon, token = ADMIN_TOKEN): Promise<string> {
  const res = await request(r, 'POST', '/admin/login', FORM, new URLSearchParams({ token }).toString());
  expect(res.status, res.text).toBe(303);
  return res.headers.get('set-cookie')!.split(';')[0]!;
}

describe('the status page\'s sign-in', () => {
  it('shows a browser that is not signed in the form (200), and a program 401', async () => {
    const r = await daemon();
    const page = await request(r, 'GET', '/admin/', HTML);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.text).toContain('<form method="post" action="/admin/login">');
    const api = await request(r, 'GET', '/admin/', { accept: 'application/json' });
    expect(api.status).toBe(401);
    expect(api.headers.get('www-authenticate')).toBe('Bearer realm="smppd-admin"');
    expect(JSON.parse(api.text)).toMatchObject({ status: 401, errorCode: 'UNAUTHORIZED', requestUri: '/admin/' });
  }, 30_000);

  it('serves the page to a bearer admin token, and refuses a client\'s (403)', async () => {
    const r = await daemon();
    const page = await request(r, 'GET', '/admin/', { ...HTML, authorization: `Bearer ${ADMIN_TOKEN}` });
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<tr data-bind="a#0"><td>a#0<\/td><td class="state"><span class="badge ok">bound<\/span>/);
    expect(page.text).not.toContain('Sign out');
    const client = await request(r, 'GET', '/admin/', { ...HTML, authorization: `Bearer ${TOKENS.app}` });
    expect(client.status).toBe(403);
  }, 30_000);

  it('opens a session for an admin token only: HttpOnly, SameSite=Strict, /admin, 12 h', async () => {
    const lines: string[] = [];
    const r = await daemon(lines);
    for (const token of [TOKENS.app, 'not-a-token-0123456789', '']) {
      const refused = await request(r, 'POST', '/admin/login', FORM, new URLSearchParams({ token }).toString());
      expect(refused.status, token).toBe(401);
      expect(refused.headers.get('set-cookie')).toBeNull();
      expect(refused.text).toContain('<p class="error" role="alert">');
      expect(refused.text).toContain('<form method="post" action="/admin/login">');
    }
    const res = await request(r, 'POST', '/admin/login', FORM, `token=${encodeURIComponent(ADMIN_TOKEN)}`);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/admin/');
    expect(res.headers.get('set-cookie')).toMatch(/^smppd_admin=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/admin; Max-Age=43200$/);
    const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
    const page = await request(r, 'GET', '/admin/', { ...HTML, cookie });
    expect(page.text).toContain('signed in as ops');
    expect(page.text).toContain('Sign out');
    expect((await request(r, 'GET', '/admin/status', { cookie })).status).toBe(200);
    const log = lines.join('\n');
    expect(log).toContain('"event":"admin_signed_in"');
    expect(log).not.toContain(ADMIN_TOKEN);
    expect(log).not.toContain(cookie.split('=')[1]);
  }, 30_000);
});

describe('the page\'s forms', () => {
  it('suspend and resume with the cookie from the page (its Origin), back to the page; refused from elsewhere', async () => {
    const r = await daemon();
    const cookie = await signIn(r);
    const origin = `http://127.0.0.1:${r.d.http.port}`;
    const foreign = await request(r, 'POST', '/admin/upstreams/a/suspend', { ...FORM, cookie, origin: 'http://evil.example' }, 'reason=x');
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.text)).toMatchObject({ errorCode: 'FORBIDDEN' });
    expect((await request(r, 'POST', '/admin/upstreams/a/suspend', { ...FORM, cookie }, 'reason=x')).status).toBe(403);
    expect((await status(r)).upstreams[0]!.suspended).toBeNull();

    const suspended = await request(r, 'POST', '/admin/upstreams/a/suspend', { ...FORM, cookie, origin }, 'reason=SMSC+maintenance');
    expect(suspended.status).toBe(303);
    expect(suspended.headers.get('location')).toBe('/admin/');
    expect((await status(r)).upstreams[0]!.suspended).toMatchObject({ by: 'ops', reason: 'SMSC maintenance' });
    const page = await request(r, 'GET', '/admin/', { ...HTML, cookie });
    expect(page.text).toContain('<tr data-upstream="a" class="suspended">');

    const resumed = await request(r, 'POST', '/admin/upstreams/a/resume', { ...FORM, cookie, origin }, '');
    expect(resumed.status).toBe(303);
    expect((await status(r)).upstreams[0]!.suspended).toBeNull();
    // The JSON API with the cookie: the header instead of an Origin, and JSON back.
    const api = await request(r, 'POST', '/admin/upstreams/a/suspend', { cookie, 'x-smppd-admin': '1' });
    expect(api.status).toBe(200);
    expect(JSON.parse(api.text)).toMatchObject({ upstream: 'a', suspended: { by: 'ops', reason: null } });
  }, 30_000);
});

describe('the session\'s end', () => {
  it('ends at sign-out: the cookie cleared, and the old one no longer signs in', async () => {
    const r = await daemon();
    const cookie = await signIn(r);
    const out = await request(r, 'POST', '/admin/logout', { cookie, origin: `http://127.0.0.1:${r.d.http.port}` });
    expect(out.status).toBe(303);
    expect(out.headers.get('set-cookie')).toBe('smppd_admin=; HttpOnly; SameSite=Strict; Path=/admin; Max-Age=0');
    expect((await request(r, 'GET', '/admin/status', { cookie })).status).toBe(401);
    expect((await request(r, 'GET', '/admin/', { ...HTML, cookie })).text).toContain('action="/admin/login"');
  }, 30_000);

  it('ends when its token leaves admin.tokens (SIGHUP)', async () => {
    const r = await daemon();
    const cookie = await signIn(r);
    r.d.reloadAdmins({ tokens: [{ name: 'ops', token: 'a-new-admin-token-0123456789' }] });
    expect((await request(r, 'GET', '/admin/status', { cookie })).status).toBe(401);
  }, 30_000);
});
