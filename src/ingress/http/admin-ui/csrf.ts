/**
 * The admin API's CSRF rule for requests that change something and are authenticated by the
 * session cookie (suspend, resume, logout): they carry `X-Smppd-Admin: 1` — which a form of
 * another site cannot set, and a script of another site cannot send without CORS, which smppd
 * never grants — or they come from the page's own form, whose Origin is this server's Host.
 * SameSite=Strict already keeps the cookie off other sites' requests; this holds where a
 * browser does not honour it. A request with a bearer header needs neither: no browser adds one.
 */

export const CSRF_HEADER = 'x-smppd-admin';

/** null when the request may go on; otherwise why not (for the 403's message). */
export function csrfProblem(headers: { origin?: string | undefined; host?: string | undefined; [CSRF_HEADER]?: string | string[] | undefined }): string | null {
  if (headers[CSRF_HEADER] === '1') return null;
  const { origin, host } = headers;
  if (origin !== undefined && origin !== 'null' && host !== undefined) {
    try {
      if (new URL(origin).host === host.toLowerCase()) return null;
    } catch {
      // Not a URL: refused below.
    }
  }
  return 'a request signed in with the session cookie must come from the status page (its Origin this server) or carry the header X-Smppd-Admin: 1';
}
