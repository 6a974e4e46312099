/**
 * Per-client rate limits on send requests (`clients[].rateLimit`), one token bucket per limited
 * client, shared by the HTTP API and the queue ingress: a sendSms, a sendbulk and a queue
 * message each cost one token, whichever way they came. A client without a limit is never
 * refused. Time comes from the injected Clock.
 *
 * A reload keeps each bucket of a client that stays limited, with the new rate and burst applied
 * from then on (the tokens saved so far kept, down to the new burst): a SIGHUP, which config
 * management may send often, hands no client a fresh burst. A client that gains a limit starts
 * with a full bucket; one that loses it, or leaves the configuration, loses its bucket.
 */
import type { Clock } from '../core/clock.js';
import { TokenBucket } from '../core/token-bucket.js';

/** `clients[].rateLimit`. */
export interface RateLimit {
  /** Tokens added per second. > 0. */
  perSecond: number;
  /** Tokens saved at most. ≥ 1. */
  burst: number;
}

/** What the limiter reads of a client. */
export interface RateLimitedClient {
  name: string;
  /** Absent: unlimited. */
  rateLimit?: RateLimit;
}

interface Limited {
  limit: RateLimit;
  bucket: TokenBucket;
}

export class ClientRateLimiter {
  readonly #clock: Clock;
  #limited = new Map<string, Limited>();

  constructor(clients: readonly RateLimitedClient[], clock: Clock) {
    this.#clock = clock;
    this.replace(clients);
  }

  /** The client's limit, or undefined when it has none. */
  limitOf(client: string): RateLimit | undefined {
    return this.#limited.get(client)?.limit;
  }

  /** Takes one send's token: 0, or the milliseconds until the client has one. */
  take(client: string): number {
    const limited = this.#limited.get(client);
    return limited === undefined ? 0 : limited.bucket.take(1, this.#clock.now());
  }

  /** SIGHUP: the new clients' limits, from now on. */
  replace(clients: readonly RateLimitedClient[]): void {
    const now = this.#clock.now();
    const next = new Map<string, Limited>();
    for (const c of clients) {
      if (c.rateLimit === undefined) continue;
      const limit = { perSecond: c.rateLimit.perSecond, burst: c.rateLimit.burst };
      const kept = this.#limited.get(c.name)?.bucket;
      kept?.setLimits(limit.perSecond, limit.burst, now);
      next.set(c.name, { limit, bucket: kept ?? new TokenBucket(limit.perSecond, limit.burst, now) });
    }
    this.#limited = next;
  }
}

/** `Retry-After` for a wait: whole seconds, rounded up, at least 1 (RFC 9110 §10.2.3 takes no fractions). */
export function retryAfterSeconds(waitMs: number): number {
  return Math.max(1, Math.ceil(waitMs / 1000));
}
