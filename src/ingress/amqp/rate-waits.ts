/**
 * Queue messages waiting for their client's rate limit (`clients[].rateLimit`), one line per
 * client. A message past its client's limit is not held on the queue's own consumer, where it
 * would sit in the prefetch every client shares: it is set aside in the client's wait queue
 * (`<queue>.wait.<client>`, see queue-ingress.ts), whose consumer brings it here. Each line sends
 * its messages in order, one token each, with one timer for the next token; a client's new
 * messages keep to the back of its line while it has any waiting, so its earlier ones are not
 * overtaken. Time comes from the injected Clock.
 */
import type { Clock, TimerHandle } from '../../core/clock.js';
import type { ClientRateLimiter } from '../../api/client-rate-limiter.js';

interface Line<T> {
  items: T[];
  /** Messages set aside and not yet back from the wait queue (an estimate: never below 0). */
  settingAside: number;
  timer: TimerHandle | undefined;
}

export class RateWaits<T> {
  readonly #limiter: ClientRateLimiter;
  readonly #clock: Clock;
  readonly #send: (item: T) => void;
  readonly #lines = new Map<string, Line<T>>();
  #size = 0;

  /** `send` runs for each item once its token is taken, in the order of its line. */
  constructor(limiter: ClientRateLimiter, clock: Clock, send: (item: T) => void) {
    this.#limiter = limiter;
    this.#clock = clock;
    this.#send = send;
  }

  /** Messages waiting in the lines. */
  get size(): number {
    return this.#size;
  }

  /**
   * A message of `client` from the queue: true when it may be sent now (its token taken), false
   * when it must be set aside: the client is past its limit, or has messages waiting already.
   */
  admit(client: string): boolean {
    const line = this.#lines.get(client);
    if (line !== undefined && (line.items.length > 0 || line.settingAside > 0)) return false;
    return this.#limiter.take(client) === 0;
  }

  /** A message of `client` is being set aside in its wait queue. */
  settingAside(client: string): void {
    this.#line(client).settingAside++;
  }

  /** Setting a message aside failed: it is not on its way to the wait queue. */
  setAsideFailed(client: string): void {
    const line = this.#lines.get(client);
    if (line === undefined) return;
    line.settingAside = Math.max(0, line.settingAside - 1);
    this.#forgetIfIdle(client, line);
  }

  /** A message of `client` from its wait queue: it is sent when its turn and its token come. */
  hold(client: string, item: T): void {
    const line = this.#line(client);
    line.settingAside = Math.max(0, line.settingAside - 1);
    line.items.push(item);
    this.#size++;
    if (line.timer === undefined) this.#pump(client, line);
  }

  /** The limits changed (SIGHUP): each line asks again now. */
  limitsChanged(): void {
    for (const [client, line] of this.#lines) {
      line.timer?.cancel();
      line.timer = undefined;
      this.#pump(client, line);
    }
  }

  /** Empties every line (a stop, a lost connection): the items, for the caller to return to the broker. */
  releaseAll(): T[] {
    const items: T[] = [];
    for (const line of this.#lines.values()) {
      line.timer?.cancel();
      items.push(...line.items);
    }
    this.#lines.clear();
    this.#size = 0;
    return items;
  }

  #line(client: string): Line<T> {
    let line = this.#lines.get(client);
    if (line === undefined) this.#lines.set(client, line = { items: [], settingAside: 0, timer: undefined });
    return line;
  }

  #pump(client: string, line: Line<T>): void {
    line.timer = undefined;
    while (line.items.length > 0) {
      const waitMs = this.#limiter.take(client);
      if (waitMs > 0) {
        line.timer = this.#clock.setTimer(waitMs, () => this.#pump(client, line));
        return;
      }
      const item = line.items.shift()!;
      this.#size--;
      this.#send(item);
    }
    this.#forgetIfIdle(client, line);
  }

  #forgetIfIdle(client: string, line: Line<T>): void {
    if (line.items.length === 0 && line.settingAside === 0 && line.timer === undefined && this.#lines.get(client) === line) this.#lines.delete(client);
  }
}
