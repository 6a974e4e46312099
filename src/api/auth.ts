/**
 * Who calls the API: the config's clients, by bearer token (messaging-service-api.md §5) on the
 * HTTP API, by the queue's rule (ingress/amqp/queue-identity.ts) on the queue; a known client
 * that may not use a sender ID is 403 either way. Tokens are compared in constant time: both
 * sides are hashed to equal-length SHA-256 digests (the configured ones once, at start) and
 * every client is compared, so neither the length nor the position of a match shows in the
 * timing. A token never reaches a message or a log line.
 */
import * as crypto from 'node:crypto';
import type { RateLimit } from './client-rate-limiter.js';
import { ApiError } from './errors.js';

/** One caller of the API (the config's `clients[]`, token read). */
export interface ApiClient {
  /** Unique; stored with the client's messages, batches and schedules, and logged. */
  name: string;
  /** The bearer token. A secret. */
  token: string;
  /** Sender IDs it may use; absent: any. */
  senders?: readonly string[];
  /** Send requests per second and burst (both ingresses together); absent: unlimited. */
  rateLimit?: RateLimit;
}

/**
 * SHA-256 of the token, UTF-8. crypto.hash (Node ≥ 20.12; package.json requires 20.18.1) is the
 * one-shot form, with no Hash object per request; its digest as a 'binary' (latin1) string
 * copied into a pooled Buffer costs half of a digest returned as a Buffer.
 */
const digest = (token: string): Buffer => Buffer.from(crypto.hash('sha256', token, 'binary'), 'binary');

/** The clients by token. */
export class ClientTokens {
  #clients: ReadonlyArray<{ client: ApiClient; digest: Buffer }>;

  constructor(clients: readonly ApiClient[]) {
    this.#clients = digests(clients);
  }

  /** SIGHUP: the new list of clients, for the next token matched. */
  replace(clients: readonly ApiClient[]): void {
    this.#clients = digests(clients);
  }

  /** The client whose token this is, or undefined. */
  match(token: string): ApiClient | undefined {
    const presented = digest(token);
    let found: ApiClient | undefined;
    for (const c of this.#clients) {
      // No early exit: every client costs the same comparison.
      if (crypto.timingSafeEqual(presented, c.digest) && found === undefined) found = c.client;
    }
    return found;
  }
}

function digests(clients: readonly ApiClient[]): ReadonlyArray<{ client: ApiClient; digest: Buffer }> {
  return clients.map((client) => ({ client, digest: digest(client.token) }));
}

/** 403 unless the client may send as `senderId` (§5.3: a valid token not allowed to do this). */
export function assertSenderAllowed(client: ApiClient, senderId: string): void {
  if (client.senders !== undefined && !client.senders.includes(senderId)) {
    throw new ApiError('SENDER_NOT_ALLOWED', `senderId ${JSON.stringify(senderId)} is not allowed for this token; ask the operator to add it to the client's senders`);
  }
}
