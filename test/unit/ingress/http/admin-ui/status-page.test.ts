/**
 * The status page and the sign-in page as HTML: the facts of GET /admin/status, everything from
 * the daemon escaped, nothing loaded from elsewhere, and a Content-Security-Policy that lets run
 * only the page's own style and script. In a browser: test/integration/http/admin-page.test.ts.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY, PAGE_HEADERS, REFRESH_SECONDS, escapeHtml } from '../../../../../src/ingress/http/admin-ui/html.js';
import { renderLoginPage } from '../../../../../src/ingress/http/admin-ui/login-page.js';
import { formatDuration } from '../../../../../src/ingress/http/admin-ui/status-facts.js';
import { renderStatusPage } from '../../../../../src/ingress/http/admin-ui/status-page.js';
import { sampleStatus } from '../../../../support/admin-samples.js';

const signedIn = { admin: 'ops', session: true };

/** The text of each `<tag …>…</tag>` in `html`. */
function contents(html: string, tag: string): string[] {
  return [...html.matchAll(new RegExp(`<${tag}(?: [^>]*)?>([\\s\\S]*?)</${tag}>`, 'g'))].map((m) => m[1]!);
}

/** The row with `attr="value"`, tags stripped, cells joined by |. */
function rowText(html: string, attr: string, value: string): string {
  const m = new RegExp(`<tr ${attr}="${value}"[^>]*>([\\s\\S]*?)</tr>`).exec(html);
  if (!m) throw new Error(`no row ${attr}=${value}`);
  return m[1]!.replace(/<\/td>/g, '|').replace(/<[^>]+>/g, '').replace(/\|$/, '');
}

describe('the status page', () => {
  const html = renderStatusPage(sampleStatus(), signedIn);

  it('shows each bind with its state, time bound, rates, window and pace', () => {
    expect(rowText(html, 'data-bind', 'demo#0')).toBe('demo#0|bound|for 1h03m|950|940|37/100|3|1000/s|no (0 episodes)|');
    expect(rowText(html, 'data-bind', 'demo#1')).toBe('demo#1|backoff|next try in 4s|0|12.5|0/100|0|unpaced|throttled (2 episodes)|connect ECONNREFUSED 10.0.0.7:2775');
  });

  it('marks a suspended upstream, with who, since when and why, and offers to resume it', () => {
    expect(html).toMatch(/<tr data-upstream="backup" class="suspended">/);
    expect(rowText(html, 'data-upstream', 'backup')).toContain('suspended|0|1/1|suspended since 2026-11-27T02:00:00.000Z (3m00s) by ops: maintenance &lt;window&gt;');
    expect(html).toContain('<form class="inline" method="post" action="/admin/upstreams/backup/resume">');
    expect(rowText(html, 'data-upstream', 'demo')).toMatch(/^demo\|available\|12\|1\/2\|/);
    expect(html).toContain('action="/admin/upstreams/demo/suspend"');
  });

  it('shows the daemon, its store and each client', () => {
    expect(html).toContain('<h1>smppd on host-a</h1>');
    expect(html).toMatch(/version 0\.1\.0 · up 2h03m .*store sqlite ok \(1\.2 ms\)/);
    expect(rowText(html, 'data-client', 'app')).toBe('app|12|3|0');
    expect(html).toContain('signed in as ops');
  });

  it('shows ? for the counts the store could not give', () => {
    const status = sampleStatus();
    status.clients[0] = { name: 'app', queued: null, outbox: null };
    expect(rowText(renderStatusPage(status, signedIn), 'data-client', 'app')).toBe('app|?|?|?');
  });

  it('leaves out the forms for a viewer with a bearer header (no cookie to carry them)', () => {
    const bearer = renderStatusPage(sampleStatus(), { admin: 'ops', session: false });
    expect(bearer).not.toContain('<form');
    expect(bearer).toContain('<tr data-upstream="backup" class="suspended">');
  });

  it('escapes every value from the daemon', () => {
    const status = sampleStatus();
    status.instanceId = '<script>alert(1)</script>';
    status.upstreams[0]!.binds[1]!.detail = '"><img src=x onerror=alert(2)>';
    status.upstreams[0]!.name = 'a"b&c';
    const out = renderStatusPage(status, signedIn);
    expect(out).not.toContain('<script>alert(1)');
    expect(out).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(out).not.toContain('<img');
    expect(out).toContain('data-upstream="a&quot;b&amp;c"');
    expect(out).toContain('action="/admin/upstreams/a%22b%26c/suspend"');
  });

  it('loads nothing from elsewhere, and refreshes itself', () => {
    expect(html).not.toMatch(/\b(?:src|href)=/);
    expect(contents(html, 'script')).toHaveLength(1);
    expect(html).toContain(`<noscript><meta http-equiv="refresh" content="${REFRESH_SECONDS}"></noscript>`);
  });

  it('has a policy that allows its own style and script by their hashes, and nothing inline else', () => {
    const hash = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
    const [script] = contents(html, 'script');
    const [style] = contents(html, 'style');
    expect(CONTENT_SECURITY_POLICY).toContain(`script-src ${hash(script!)}`);
    expect(CONTENT_SECURITY_POLICY).toContain(`style-src ${hash(style!)}`);
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-inline');
    expect(CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
    expect(PAGE_HEADERS['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(PAGE_HEADERS['cache-control']).toBe('no-store');
    // no-referrer would make a browser send Origin: null with the page's own forms, which the CSRF rule refuses.
    expect(PAGE_HEADERS['referrer-policy']).toBe('same-origin');
  });
});

describe('the sign-in page', () => {
  it('is a form posting a password field named token to /admin/login', () => {
    const html = renderLoginPage();
    expect(html).toContain('<form method="post" action="/admin/login">');
    expect(html).toContain('<input type="password" id="token" name="token"');
    expect(html).not.toContain('class="error"');
    expect(html).not.toContain('<script');
  });

  it('says why the last token was refused, escaped', () => {
    expect(renderLoginPage('not an <admin> token')).toContain('<p class="error" role="alert">not an &lt;admin&gt; token</p>');
  });
});

describe('escapeHtml and formatDuration', () => {
  it('escapes the five characters HTML gives meaning to', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });

  it.each([[0, '0s'], [59, '59s'], [65, '1m05s'], [7_380, '2h03m'], [273_600, '3d04h']])('%i s is %s', (s, text) => {
    expect(formatDuration(s)).toBe(text);
  });
});
