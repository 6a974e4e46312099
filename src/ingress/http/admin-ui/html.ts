/**
 * What every admin page shares: escaping, the frame (head, inline style, the refreshing script)
 * and the headers that go with it. Nothing is loaded from elsewhere: the style and the script are
 * inline, and the Content-Security-Policy names their SHA-256 hashes, so no other script runs
 * even if some text escaped its escaping.
 */
import { createHash } from 'node:crypto';

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for an element's content or a quoted attribute. */
export function escapeHtml(text: string | number): string {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** Seconds between two refreshes of the status page. */
export const REFRESH_SECONDS = 5;

const STYLE = `
:root { color-scheme: light dark; --ok: #1a7f37; --warn: #9a6700; --bad: #cf222e; --muted: #6e7781; }
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; }
h1 { font-size: 1.3rem; margin: 0 0 .25rem; } h2 { font-size: 1.05rem; margin: 1.5rem 0 .5rem; }
header p, .note { color: var(--muted); margin: .25rem 0; }
table { border-collapse: collapse; } th, td { text-align: left; padding: .25rem .75rem .25rem 0; vertical-align: top; }
th { border-bottom: 1px solid var(--muted); } .n { text-align: right; font-variant-numeric: tabular-nums; }
.badge { font-weight: 600; } .ok { color: var(--ok); } .warn { color: var(--warn); } .bad { color: var(--bad); }
tr.suspended td { background: color-mix(in srgb, var(--warn) 15%, transparent); }
form.inline { display: inline; } input[type=text], input[type=password] { width: 16rem; }
.error { color: var(--bad); font-weight: 600; }
`;

/**
 * Every REFRESH_SECONDS the page fetches itself (the same cookie) and swaps in the new
 * `<main id="status">`: the server renders the tables, so their escaping is in one place. A page
 * that comes back without it (signed out, session expired) stops the refresh and says so.
 */
const SCRIPT = `
(() => {
  const note = document.getElementById('refresh-note');
  const refresh = async () => {
    try {
      const res = await fetch(location.pathname, { headers: { accept: 'text/html' }, credentials: 'same-origin', cache: 'no-store' });
      const next = new DOMParser().parseFromString(await res.text(), 'text/html').getElementById('status');
      if (!res.ok || !next) {
        note.textContent = 'Not refreshing: signed out or the session expired. Reload the page to sign in.';
        return;
      }
      document.getElementById('status').replaceWith(document.adoptNode(next));
      note.textContent = '';
    } catch (e) {
      note.textContent = 'The daemon did not answer the last refresh (' + new Date().toISOString() + '); trying again.';
    }
    setTimeout(refresh, ${REFRESH_SECONDS * 1000});
  };
  setTimeout(refresh, ${REFRESH_SECONDS * 1000});
})();
`;

const sha256 = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * Only this page's own style and script, fetches and form posts to this origin, no frames (no
 * clickjacking of the suspend buttons), no <base> to redirect its links.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  `script-src ${sha256(SCRIPT)}`,
  `style-src ${sha256(STYLE)}`,
  "connect-src 'self'",
  "form-action 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The headers of every admin page: the policy above, no caching of what it shows, no sniffing. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  // Not no-referrer: under it a browser sends `Origin: null` with the page's own form posts, and
  // the admin guard's CSRF rule needs their Origin. same-origin never sends the address elsewhere.
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
};

/** A whole page: `body` is HTML already escaped; `refresh` adds the script (and, without scripts, a meta refresh). */
export function page(title: string, body: string, refresh: boolean): string {
  const fallback = refresh ? `<noscript><meta http-equiv="refresh" content="${REFRESH_SECONDS}"></noscript>` : '';
  return [
    '<!doctype html>',
    '<html lang="en">',
    `<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title>`,
    `${fallback}<style>${STYLE}</style></head>`,
    `<body>${body}${refresh ? `<script>${SCRIPT}</script>` : ''}</body>`,
    '</html>',
    '',
  ].join('\n');
}
