/**
 * The status page's routes in /openapi.json (with the admin API): HTML for a person, described
 * so that the document still names every route the server has.
 */
import { ADMIN_CHALLENGE } from '../admin/admin-auth.js';
import { SESSION_COOKIE, SESSION_SECONDS } from './sessions.js';

type Json = Record<string, unknown>;

const html = (description: string): Json => ({ description, content: { 'text/html': { schema: { type: 'string' } } } });
const backToPage = (description: string): Json => ({ description, headers: { Location: { schema: { type: 'string', const: '/admin/' } } } });
const cookie = `${SESSION_COOKIE}=<session id>; HttpOnly; SameSite=Strict; Path=/admin; Max-Age=${SESSION_SECONDS} (and Secure with http.tls)`;
const errorBody = { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } };

export const adminPagePaths: Json = {
  // Served at /admin/ too (the Location of its forms' answers); OpenAPI paths take no trailing slash.
  '/admin': {
    get: {
      operationId: 'getStatusPage',
      summary: 'The status page: the facts of /admin/status as HTML, refreshing itself (admin; also at /admin/)',
      description: 'With Accept: text/html and not signed in, the sign-in form (200). Signed in by the session cookie, the page has '
        + 'suspend and resume buttons, forms that post to the suspend and resume routes (answered 303 back to the page).',
      security: [{ adminBearer: [] }, { adminSession: [] }],
      responses: {
        200: html('The page, or the sign-in form.'),
        401: { description: `Not signed in, and no text/html in Accept. WWW-Authenticate: ${ADMIN_CHALLENGE}.`, content: errorBody },
        403: { description: 'FORBIDDEN: a client\'s token.', content: errorBody },
      },
    },
  },
  '/admin/login': {
    post: {
      operationId: 'signIn',
      summary: 'Sign in to the status page with an admin token',
      security: [],
      requestBody: {
        required: true,
        content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', properties: { token: { type: 'string' } }, required: ['token'] } } },
      },
      responses: {
        303: { ...backToPage(`Signed in: Set-Cookie ${cookie}. Sessions live in memory (a restart ends them) for 12 hours.`) },
        401: html('Not an admin token (a client\'s is not one either): the form again, with a line saying so.'),
      },
    },
  },
  '/admin/logout': {
    post: {
      operationId: 'signOut',
      summary: 'Sign out of the status page',
      description: 'With the session cookie, it needs X-Smppd-Admin: 1 or an Origin of this host, as every change made with the cookie.',
      security: [{ adminSession: [] }, {}],
      responses: {
        303: backToPage(`The session ended and the cookie cleared (${SESSION_COOKIE}=; Max-Age=0).`),
        403: { description: 'FORBIDDEN: the cookie without X-Smppd-Admin: 1 or an Origin of this host.', content: errorBody },
      },
    },
  },
};

export const adminSessionScheme: Json = {
  type: 'apiKey', in: 'cookie', name: SESSION_COOKIE,
  description: 'The status page\'s session, set by POST /admin/login. A change made with it needs X-Smppd-Admin: 1 or an Origin of this host.',
};
