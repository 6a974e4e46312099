/**
 * The sign-in page of the status page: one field for an admin token, posted to /admin/login
 * (a password field: the browser does not show it or keep it in the page's history).
 */
import { escapeHtml as e, page } from './html.js';

/** The page; `error` is a line saying why the last token was refused. */
export function renderLoginPage(error?: string): string {
  const problem = error === undefined ? '' : `<p class="error" role="alert">${e(error)}</p>`;
  const body = '<header><h1>smppd status</h1><p>Sign in with an admin token (admin.tokens in the configuration).</p></header>'
    + `<main>${problem}<form method="post" action="/admin/login">`
    + '<label for="token">Admin token</label> <input type="password" id="token" name="token" required autocomplete="current-password" autofocus> '
    + '<button type="submit">Sign in</button></form>'
    + '<p class="note">The session lasts 12 hours, or until the daemon restarts.</p></main>';
  return page('smppd status: sign in', body, false);
}
