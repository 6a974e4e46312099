/**
 * Bearer tokens on the HTTP API (messaging-service-api.md §5): a missing or unknown token is 401
 * with the gateway's two-field body. The token is matched in constant time (api/auth.ts) and
 * never reaches a message or a log line.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { ClientTokens, type ApiClient } from '../../api/auth.js';
import { ApiError } from '../../api/errors.js';
import { sendUnauthorized } from './error-replies.js';

const BEARER = /^Bearer +(\S+) *$/i;

/** The token of an `Authorization: Bearer <token>` header; undefined when the header is absent or of another form. */
export function bearerToken(header: string | undefined): string | undefined {
  return header === undefined ? undefined : BEARER.exec(header)?.[1] || undefined;
}

/** Where the hook leaves the client on the request (a request decorator: no per-request map entry). */
const CLIENT = Symbol('smppd.client');

export class Authenticator {
  readonly #tokens: ClientTokens;

  constructor(clients: readonly ApiClient[]) {
    this.#tokens = new ClientTokens(clients);
  }

  /**
   * SIGHUP: the new list of clients takes effect for the next request; requests already
   * authenticated finish as the client they were.
   */
  replace(clients: readonly ApiClient[]): void {
    this.#tokens.replace(clients);
  }

  /** Whether `token` is a client's (the admin API refuses it with 403 rather than 401). */
  knows(token: string): boolean {
    return this.#tokens.match(token) !== undefined;
  }

  /** Every route of `scope` needs a token; `clientOf` answers who sent it. */
  guard(scope: FastifyInstance): void {
    scope.decorateRequest(CLIENT, null);
    scope.addHook('onRequest', this.#authenticate);
  }

  /** The client the request authenticated as. */
  clientOf(request: FastifyRequest): ApiClient {
    const client = request.getDecorator<ApiClient | null>(CLIENT);
    if (!client) throw new ApiError('INTERNAL', 'route served without authentication');
    return client;
  }

  /**
   * onRequest: runs before the body is read, so an unknown caller cannot make us read one. A
   * callback hook, not an async one: no promise per request. A 401 is sent and `done` not called.
   */
  readonly #authenticate = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const client = this.identify(request.headers.authorization);
    if (typeof client === 'string') {
      sendUnauthorized(reply, client);
      return;
    }
    request.setDecorator(CLIENT, client);
    done();
  };

  /** The client the Authorization header names, or why it names none (the 401's message: it never quotes the header). */
  identify(header: string | undefined): ApiClient | string {
    if (header === undefined || header === '') return 'missing bearer token: send the header Authorization: Bearer <token>';
    const m = BEARER.exec(header);
    if (!m?.[1]) return 'the Authorization header must be Bearer <token>';
    return this.#tokens.match(m[1]) ?? 'invalid bearer token';
  }
}
