/**
 * The status page's routes, in the /admin scope behind the admin guard (admin/admin-auth.ts):
 * GET /admin/ (the page, or the sign-in form for a browser not signed in), POST /admin/login
 * (an admin token typed in the form opens a session: the cookie `smppd_admin`) and POST
 * /admin/logout. The session is one more way the guard recognises an admin, so the page's own
 * suspend and resume forms reach the API's routes with the cookie, under the guard's CSRF rule;
 * a form post that succeeds is answered with a redirect back to the page instead of JSON.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { Clock } from '../../../core/clock.js';
import type { Log } from '../../../core/log.js';
import type { AdminStatus } from '../../../dispatch/admin-status.js';
import { ADMIN_CHALLENGE, sendAdminRefusal, type AdminAuth, type AdminRouteConfig } from '../admin/admin-auth.js';
import { PAGE_HEADERS } from './html.js';
import { renderLoginPage } from './login-page.js';
import { AdminSessions, clearedSessionCookie, sessionCookie, sessionIdOf } from './sessions.js';
import { renderStatusPage } from './status-page.js';

export interface AdminPageDeps {
  auth: AdminAuth;
  /** What GET /admin/status answers: the page shows the same reading. */
  status(): Promise<AdminStatus>;
  /** For the sessions' expiry. */
  clock: Clock;
  log: Log;
  /** http.tls is set: the cookie is `Secure`, never sent in clear. */
  secure: boolean;
}

const FORM_TYPE = 'application/x-www-form-urlencoded';
/** Routes a browser reaches without being signed in: the guard lets a 401 through to them. */
const OPEN: { config: AdminRouteConfig } = { config: { adminAuth: 'optional' } };
/** The API's routes the page posts its forms to, as fastify names them under the prefix. */
const FORM_TARGETS = new Set(['/admin/upstreams/:name/suspend', '/admin/upstreams/:name/resume']);

/** Registers the page's routes in the /admin scope (`registerAdminScope`'s `extra`). */
export function registerAdminPage(scope: FastifyInstance, deps: AdminPageDeps): void {
  const sessions = new AdminSessions(deps.clock);
  const log = deps.log.child({ component: 'admin-page' });
  // The token is matched against admin.tokens as they are now: removed or changed by SIGHUP, its sessions end.
  deps.auth.addSessionLookup((request) => {
    const id = sessionIdOf(request.headers.cookie);
    const token = id === undefined ? null : sessions.tokenOf(id);
    const admin = token === null ? undefined : deps.auth.matchToken(token);
    return admin ? { name: admin.name, via: 'session' } : undefined;
  });

  // The forms' fields: one value each (the last, if repeated); an empty field is no field, as an
  // empty reason is no reason.
  scope.addContentTypeParser(FORM_TYPE, { parseAs: 'string' }, (_request, body, done) => {
    const fields: Record<string, string> = {};
    for (const [k, v] of new URLSearchParams(typeof body === 'string' ? body : body.toString('utf8'))) {
      if (v === '') delete fields[k];
      else fields[k] = v;
    }
    done(null, fields);
  });
  scope.addHook('onSend', backToPage);

  scope.get('/', OPEN, async (request, reply) => {
    const admin = deps.auth.adminOf(request);
    if (!admin) {
      if (!wantsHtml(request)) return sendAdminRefusal(reply, request, { refused: 401, message: 'missing admin token: send the header Authorization: Bearer <admin token>, or sign in on this page in a browser' });
      return reply.code(200).headers(PAGE_HEADERS).send(renderLoginPage());
    }
    const status = await deps.status();
    return reply.code(200).headers(PAGE_HEADERS).send(renderStatusPage(status, { admin: admin.name, session: admin.via === 'session' }));
  });

  scope.post('/login', OPEN, async (request, reply) => {
    const body = request.body as Record<string, unknown> | undefined;
    const token = typeof body?.['token'] === 'string' ? body['token'].trim() : '';
    const admin = token === '' ? undefined : deps.auth.matchToken(token);
    if (!admin) {
      log.info({ event: 'admin_sign_in_refused' }, 'status page sign-in refused');
      const why = token === '' ? 'Enter an admin token.' : 'That is not an admin token: use one of admin.tokens in the configuration (a client\'s token is not one).';
      return reply.code(401).headers(PAGE_HEADERS).header('www-authenticate', ADMIN_CHALLENGE).send(renderLoginPage(why));
    }
    const previous = sessionIdOf(request.headers.cookie);
    if (previous !== undefined) sessions.end(previous);
    const id = sessions.create(token);
    log.info({ event: 'admin_signed_in', admin: admin.name }, 'admin signed in on the status page');
    return reply.code(303).header('set-cookie', sessionCookie(id, deps.secure)).header('location', '/admin/').header('cache-control', 'no-store').send();
  });

  // Open too: signing out without a session (expired, or the daemon restarted) still clears the
  // cookie. With a session, the guard has checked the CSRF rule before this runs.
  scope.post('/logout', OPEN, async (request, reply) => {
    const id = sessionIdOf(request.headers.cookie);
    if (id !== undefined) sessions.end(id);
    const admin = deps.auth.adminOf(request);
    if (admin) log.info({ event: 'admin_signed_out', admin: admin.name }, 'admin signed out of the status page');
    return reply.code(303).header('set-cookie', clearedSessionCookie(deps.secure)).header('location', '/admin/').header('cache-control', 'no-store').send();
  });
}

/** Whether the request asks for HTML (a browser's navigation) rather than JSON. */
function wantsHtml(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').includes('text/html');
}

/**
 * onSend: the page's own suspend or resume form (a form post, not the JSON API) that succeeded
 * goes back to the page (303), which shows the change; a refusal keeps its five-field body.
 */
function backToPage(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: HookHandlerDoneFunction & ((err: Error | null, value?: unknown) => void)): void {
  const form = (request.headers['content-type'] ?? '').startsWith(FORM_TYPE);
  if (form && reply.statusCode === 200 && FORM_TARGETS.has(request.routeOptions.url ?? '')) {
    reply.code(303).header('location', '/admin/').header('content-type', 'text/plain; charset=utf-8');
    done(null, '');
    return;
  }
  done(null, payload);
}
