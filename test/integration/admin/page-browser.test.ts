/**
 * The status page as a person sees it, in headless Chromium (Debian's /usr/bin/chromium, driven
 * by playwright-core) against a running daemon with the simulator: the sign-in form refuses a
 * client's token and takes an admin's, the session cookie is HttpOnly and SameSite=Strict, the
 * bind table shows the binds bound, and an upstream suspended through the API shows as suspended
 * after the page's own refresh — under its Content-Security-Policy, without a reload.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REFRESH_SECONDS } from '../../../src/ingress/http/admin-ui/html.js';
import type { Cleanups } from '../../support/daemon-child.js';
import { CHROMIUM_MISSING, chromiumAvailable, launchChromium } from '../../support/headless-chromium.js';
import { ADMIN_CONFIG, ADMIN_TOKEN, suspend } from '../routing/admin.js';
import { TOKENS, routingDaemon, smsc, type RoutingDaemon } from '../routing/rig.js';

if (!chromiumAvailable) {
  // eslint-disable-next-line no-console -- the one place a developer learns why this suite did not run
  console.warn(CHROMIUM_MISSING);
}

/** Chromium's start and a few refreshes of the page, on a loaded CI machine. */
const SLOW = 60_000;
const cleanups: Cleanups = [];
let browser: Browser | undefined;

beforeAll(async () => {
  if (chromiumAvailable) browser = await launchChromium();
}, SLOW);
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A daemon with upstreams a (two binds) and b, both bound, and a fresh browser context (no cookies). */
async function setUp(): Promise<{ r: RoutingDaemon; context: BrowserContext; page: Page; base: string }> {
  const [a, b] = [await smsc(cleanups), await smsc(cleanups)];
  const r = await routingDaemon(cleanups, { upstreams: [{ name: 'a', smsc: a, extra: 'binds: 2' }, { name: 'b', smsc: b }], extra: ADMIN_CONFIG });
  await r.untilAvailable('a');
  await r.untilAvailable('b');
  const context = await browser!.newContext();
  cleanups.push(() => context.close());
  const page = await context.newPage();
  // A policy violation is the page broken for a person (a script or a style refused).
  const violations: string[] = [];
  page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) violations.push(m.text()); });
  cleanups.push(() => { expect(violations).toEqual([]); });
  return { r, context, page, base: `http://127.0.0.1:${r.d.http.port}` };
}

async function signIn(page: Page, base: string, token: string): Promise<void> {
  await page.goto(`${base}/admin/`);
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForLoadState();
}

describe.skipIf(!chromiumAvailable)('the status page in a browser', () => {
  it('refuses a client\'s token at the sign-in form, with a line saying so, and sets no cookie', async () => {
    const { context, page, base } = await setUp();
    await signIn(page, base, TOKENS.app);
    await expect.poll(() => page.getByRole('alert').innerText()).toContain('not an admin token');
    expect(await page.getByLabel('Admin token').isVisible()).toBe(true);
    expect(await context.cookies()).toEqual([]);
  }, SLOW);

  it('signs in with the form: an HttpOnly, SameSite=Strict cookie, the binds shown bound; signs out', async () => {
    const { context, page, base } = await setUp();
    await signIn(page, base, ADMIN_TOKEN);
    expect(new URL(page.url()).pathname).toBe('/admin/');
    const cookies = await context.cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ name: 'smppd_admin', path: '/admin', httpOnly: true, sameSite: 'Strict', secure: false });
    // What a person reads in the bind table: each bind, bound.
    const binds = page.locator('#binds tbody tr');
    await expect.poll(() => binds.count()).toBe(3);
    for (const id of ['a#0', 'a#1', 'b#0']) {
      expect(await page.locator(`#binds tr[data-bind="${id}"] td`).first().innerText()).toBe(id);
      expect(await page.locator(`#binds tr[data-bind="${id}"] td.state`).innerText()).toBe('bound');
    }
    expect(await page.locator('h1').innerText()).toMatch(/^smppd on /);
    expect(await page.getByText('signed in as ops').isVisible()).toBe(true);
    // No script can read the session.
    // (Expressions as strings: the tests are compiled without the DOM's types.)
    expect(await page.evaluate('document.cookie')).toBe('');

    // Signing out (a form post with the page's Origin) ends it: the form again, no cookie.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => page.getByLabel('Admin token').isVisible()).toBe(true);
    expect(await context.cookies()).toEqual([]);
  }, SLOW);

  it('marks an upstream suspended through the API after its own refresh, and resumes it with its button', async () => {
    const { r, page, base } = await setUp();
    await signIn(page, base, ADMIN_TOKEN);
    const row = page.locator('#upstreams tr[data-upstream="b"]');
    expect(await row.locator('td.state').innerText()).toBe('available');
    // A mark that a reload would wipe: the refresh must swap the tables in place.
    await page.evaluate('window.notReloaded = true');

    await suspend(r, 'b', 'SMSC maintenance');
    await expect.poll(() => row.locator('td.state').innerText(), { timeout: (REFRESH_SECONDS * 3) * 1000 }).toBe('suspended');
    expect(await row.getAttribute('class')).toBe('suspended');
    expect(await row.innerText()).toContain('by ops: SMSC maintenance');
    expect(await page.evaluate('window.notReloaded')).toBe(true);
    expect(await page.locator('#upstreams tr[data-upstream="a"] td.state').innerText()).toBe('available');

    // The page's own form: posted with the cookie and the page's Origin, back to the page.
    await row.getByRole('button', { name: 'Resume' }).click();
    await page.waitForURL(`${base}/admin/`);
    await expect.poll(() => page.locator('#upstreams tr[data-upstream="b"] td.state').innerText()).toBe('available');
    const status = await (await fetch(`${base}/admin/status`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json() as { upstreams: Array<{ name: string; suspended: unknown }> };
    expect(status.upstreams.find((u) => u.name === 'b')?.suspended).toBeNull();
  }, SLOW);
});
