/**
 * Bearer tokens (messaging-service-api.md §5): a missing or unknown token is 401 with the
 * gateway's two-field body; a known token that may not use a sender ID is 403. Tokens are
 * compared in constant time: both sides are hashed to equal-length SHA-256 digests (the
 * configured ones once, at start) and every client is compared, so neither the length nor the
 * position of a match shows in the timing. A token never reaches a message or a log line.
 */
import * as crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { RateLimit } from '../client-rate-limiter.js';
import { ApiError, sendUnauthorized } from './errors.js';

/** One caller of the API (the config's `clients[]`, token read). */
export interface HttpClient {
  /** Unique; stored with the client's messages, batches and schedules, and logged. */
  name: string;
  /** The bearer token. A secret. */
  token: string;
  /** Sender IDs it may use; absent: any. */
  senders?: readonly string[];
  /** Send requests per second and burst (both ingresses together); absent: unlimited. */
  rateLimit?: RateLimit;
}

const BEARER = /^Bearer +(\S+) *$/i;

/** Where the hook leaves the client on the request (a request decorator: no per-request map entry). */
const CLIENT = Symbol('smppd.client');

/**
 * SHA-256 of the token, UTF-8. crypto.hash (Node ≥ 20.12; package.json requires 20.18.1) is the
 * one-shot form, with no Hash object per request; its digest as a 'binary' (latin1) string
 * copied into a pooled Buffer costs half of a digest returned as a Buffer.
 */
const digest = (token: string): Buffer => Buffer.from(crypto.hash('sha256', token, 'binary'), 'binary');

export class Authenticator {
  #clients: ReadonlyArray<{ client: HttpClient; digest: Buffer }>;

  constructor(clients: readonly HttpClient[]) {
    this.#clients = digests(clients);
  }

  /**
   * SIGHUP: the new list of clients takes effect for the next request; requests already
   * authenticated finish as the client they were.
   */
  replace(clients: readonly HttpClient[]): void {
    this.#clients = digests(clients);
  }

  /** Every route of `scope` needs a token; `clientOf` answers who sent it. */
  guard(scope: FastifyInstance): void {
    scope.decorateRequest(CLIENT, null);
    scope.addHook('onRequest', this.#authenticate);
  }

  /** The client the request authenticated as. */
  clientOf(request: FastifyRequest): HttpClient {
    const client = request.getDecorator<HttpClient | null>(CLIENT);
    if (!client) throw new ApiError('INTERNAL', 'route served without authentication');
    return client;
  }

  /**
   * onRequest: runs before the body is read, so an unknown caller cannot make us read one. A
   * callback hook, not an async one: no promise per request. A 401 is sent and `done` not called.
   */
  readonly #authenticate = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const client = this.#identify(request.headers.authorization);
    if (typeof client === 'string') {
      sendUnauthorized(reply, client);
      return;
    }
    request.setDecorator(CLIENT, client);
    done();
  };

  /** The client the Authorization header names, or why it names none. */
  #identify(header: string | undefined): HttpClient | string {
    if (header === undefined || header === '') return 'missing bearer token: send the header Authorization: Bearer <token>';
    const m = BEARER.exec(header);
    if (!m?.[1]) return 'the Authorization header must be Bearer <token>';
    return this.#match(m[1]) ?? 'invalid bearer token';
  }

  #match(token: string): HttpClient | undefined {
    const presented = digest(token);
    let found: HttpClient | undefined;
    for (const c of this.#clients) {
      // No early exit: every client costs the same comparison.
      if (crypto.timingSafeEqual(presented, c.digest) && found === undefined) found = c.client;
    }
    return found;
  }
}

function digests(clients: readonly HttpClient[]): ReadonlyArray<{ client: HttpClient; digest: Buffer }> {
  return clients.map((client) => ({ client, digest: digest(client.token) }));
}

/** 403 unless the client may send as `senderId` (§5.3: a valid token not allowed to do this). */
export function assertSenderAllowed(client: HttpClient, senderId: string): void {
  if (client.senders !== undefined && !client.senders.includes(senderId)) {
    throw new ApiError('SENDER_NOT_ALLOWED', `senderId ${JSON.stringify(senderId)} is not allowed for this token; ask the operator to add it to the client's senders`);
  }
}
