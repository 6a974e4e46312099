/**
 * Bearer tokens (messaging-service-api.md §5): a missing or unknown token is 401 with the
 * gateway's two-field body; a known token that may not use a sender ID is 403. Tokens are
 * compared in constant time: both sides are hashed to equal-length SHA-256 digests and every
 * client is compared, so neither the length nor the position of a match shows in the timing.
 * A token never reaches a message or a log line.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, sendUnauthorized } from './errors.js';

/** One caller of the API (the config's `clients[]`, token read). */
export interface HttpClient {
  /** Unique; stored with the client's messages, batches and schedules, and logged. */
  name: string;
  /** The bearer token. A secret. */
  token: string;
  /** Sender IDs it may use; absent: any. */
  senders?: readonly string[];
}

const BEARER = /^Bearer +(\S+) *$/i;

const digest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

export class Authenticator {
  readonly #clients: ReadonlyArray<{ client: HttpClient; digest: Buffer }>;
  readonly #byRequest = new WeakMap<FastifyRequest, HttpClient>();

  constructor(clients: readonly HttpClient[]) {
    this.#clients = clients.map((client) => ({ client, digest: digest(client.token) }));
  }

  /** fastify onRequest hook: runs before the body is read, so an unknown caller cannot make us read one. */
  readonly authenticate = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const header = request.headers.authorization;
    if (header === undefined || header === '') return sendUnauthorized(reply, 'missing bearer token: send the header Authorization: Bearer <token>');
    const m = BEARER.exec(header);
    if (!m?.[1]) return sendUnauthorized(reply, 'the Authorization header must be Bearer <token>');
    const client = this.#match(m[1]);
    if (!client) return sendUnauthorized(reply, 'invalid bearer token');
    this.#byRequest.set(request, client);
    return undefined;
  };

  /** The client the request authenticated as. */
  clientOf(request: FastifyRequest): HttpClient {
    const client = this.#byRequest.get(request);
    if (!client) throw new ApiError('INTERNAL', 'route served without authentication');
    return client;
  }

  #match(token: string): HttpClient | undefined {
    const presented = digest(token);
    let found: HttpClient | undefined;
    for (const c of this.#clients) {
      // No early exit: every client costs the same comparison.
      if (timingSafeEqual(presented, c.digest) && found === undefined) found = c.client;
    }
    return found;
  }
}

/** 403 unless the client may send as `senderId` (§5.3: a valid token not allowed to do this). */
export function assertSenderAllowed(client: HttpClient, senderId: string): void {
  if (client.senders !== undefined && !client.senders.includes(senderId)) {
    throw new ApiError('SENDER_NOT_ALLOWED', `senderId ${JSON.stringify(senderId)} is not allowed for this token; ask the operator to add it to the client's senders`);
  }
}
