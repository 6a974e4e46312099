/**
 * Who may use the admin API (every route under /admin): the config's `admin.tokens`, by bearer
 * token, or a signed-in session that a session lookup (`addSessionLookup`: the page's cookie)
 * recognises. A client's token is refused with 403 FORBIDDEN (it is a valid token, but no
 * admin's); a missing or unknown one with 401 UNAUTHORIZED and a `Bearer realm="smppd-admin"`
 * challenge. Tokens are matched in constant time (api/auth.ts) and never reach a message or a log
 * line.
 *
 * A change made with a session (any method but GET, HEAD and OPTIONS) must prove it comes from
 * the page (CSRF, since the browser sends the cookie to any site's form): the header
 * `X-Smppd-Admin: 1`, which a cross-site form cannot set, or an Origin whose host is the request's
 * Host. A bearer request needs nothing more: a browser never adds that header on its own.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { ClientTokens } from '../../../api/auth.js';
import { ApiError } from '../../../api/errors.js';
import { bearerToken } from '../authenticator.js';
import { sendError } from '../error-replies.js';

/** An admin as the request authenticated. */
export interface AdminIdentity {
  /** `admin.tokens[].name`: logged with what the admin does. */
  name: string;
  /** How: a bearer token, or a session (the page's cookie). */
  via: 'bearer' | 'session';
}

/** Why a request is not an admin's: 401 (no or an unknown token) or 403 (a client's token; a session's change without its CSRF proof). */
export interface AdminRefusal {
  refused: 401 | 403;
  message: string;
}

/** One admin of the config (`admin.tokens[]`, token read). */
export interface AdminToken {
  name: string;
  /** A secret. */
  token: string;
}

/** Finds the admin a request's session belongs to (e.g. by its cookie); undefined when it has none. */
export type SessionLookup = (request: FastifyRequest) => AdminIdentity | undefined;

/**
 * What a route under /admin may say in its `config` (fastify's route option): `adminAuth:
 * 'optional'` runs it for a caller who is not signed in too (the page's login form), with
 * `adminOf` answering undefined; by default the guard refuses that caller.
 */
export interface AdminRouteConfig {
  adminAuth?: 'optional';
}

/** The challenge of every 401 under /admin (RFC 9110 §11.6.1). */
export const ADMIN_CHALLENGE = 'Bearer realm="smppd-admin"';

const ADMIN = Symbol('smppd.admin');
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export class AdminAuth {
  readonly #admins: ClientTokens;
  readonly #isClientToken: (token: string) => boolean;
  readonly #sessions: SessionLookup[] = [];

  /** `isClientToken`: whether a token is a client's (`Authenticator.knows`), to answer it 403 rather than 401. */
  constructor(admins: readonly AdminToken[], isClientToken: (token: string) => boolean) {
    this.#admins = new ClientTokens(admins);
    this.#isClientToken = isClientToken;
  }

  /** SIGHUP: the new admins, for the next request; sessions signed in stay (their lookup decides). */
  replace(admins: readonly AdminToken[]): void {
    this.#admins.replace(admins);
  }

  /** Another way to be signed in (the page's session cookie): asked, in order, when a request has no bearer token. */
  addSessionLookup(lookup: SessionLookup): void {
    this.#sessions.push(lookup);
  }

  /** The admin whose token this is (the login form checks a typed token with it), or undefined. */
  matchToken(token: string): AdminIdentity | undefined {
    const admin = this.#admins.match(token);
    return admin ? { name: admin.name, via: 'bearer' } : undefined;
  }

  /** Who the request is, or why it is refused. */
  identify(request: FastifyRequest): AdminIdentity | AdminRefusal {
    const header = request.headers.authorization;
    if (header !== undefined && header !== '') {
      const token = bearerToken(header);
      if (token === undefined) return { refused: 401, message: 'the Authorization header must be Bearer <admin token>' };
      const admin = this.matchToken(token);
      if (admin) return admin;
      if (this.#isClientToken(token)) return { refused: 403, message: 'a client\'s token is not an admin token: use a token of the config\'s admin.tokens' };
      return { refused: 401, message: 'invalid admin token' };
    }
    for (const lookup of this.#sessions) {
      const admin = lookup(request);
      if (admin === undefined) continue;
      if (!SAFE_METHODS.has(request.method) && !fromOwnPage(request)) {
        return { refused: 403, message: 'a change made with the session cookie needs the header X-Smppd-Admin: 1 or an Origin of this host' };
      }
      return admin;
    }
    return { refused: 401, message: 'missing admin token: send the header Authorization: Bearer <admin token>' };
  }

  /** Every route of `scope` needs an admin (but those whose config says `adminAuth: 'optional'`); `adminOf` answers who. */
  guard(scope: FastifyInstance): void {
    scope.decorateRequest(ADMIN, null);
    scope.addHook('onRequest', this.#authenticate);
  }

  /** The admin the request authenticated as; undefined on an `adminAuth: 'optional'` route for a caller who is not signed in. */
  adminOf(request: FastifyRequest): AdminIdentity | undefined {
    return request.getDecorator<AdminIdentity | null>(ADMIN) ?? undefined;
  }

  /** The admin of a route that required one. */
  requireAdmin(request: FastifyRequest): AdminIdentity {
    const admin = this.adminOf(request);
    if (!admin) throw new ApiError('INTERNAL', 'admin route served without authentication');
    return admin;
  }

  /** onRequest: before the body is read, so a stranger cannot make us read one. */
  readonly #authenticate = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const who = this.identify(request);
    if ('refused' in who) {
      if ((request.routeOptions.config as AdminRouteConfig | undefined)?.adminAuth === 'optional' && who.refused === 401) return done();
      sendAdminRefusal(reply, request, who);
      return;
    }
    request.setDecorator(ADMIN, who);
    done();
  };
}

/** A refusal in the five-field body; a 401 with the admin realm's challenge. */
export function sendAdminRefusal(reply: FastifyReply, request: FastifyRequest, refusal: AdminRefusal): FastifyReply {
  if (refusal.refused === 401) return sendError(reply, request, new ApiError('UNAUTHORIZED', refusal.message, { 'www-authenticate': ADMIN_CHALLENGE }));
  return sendError(reply, request, new ApiError('FORBIDDEN', refusal.message));
}

/** The CSRF proof of a change made with a session: the page's header, or an Origin of this very host. */
function fromOwnPage(request: FastifyRequest): boolean {
  if (request.headers['x-smppd-admin'] === '1') return true;
  const origin = request.headers.origin;
  const host = request.headers.host;
  if (origin === undefined || host === undefined) return false;
  try {
    return new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}
