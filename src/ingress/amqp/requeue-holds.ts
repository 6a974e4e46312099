/**
 * Queue messages whose send failed for a passing reason (QUEUE_FULL, a store error): each is held
 * unacked for a delay, then nacked back to the queue it came from. The delay is full jitter under
 * a ceiling that grows with how long sends have been failing, and at least the failure's
 * retry-after. While the session is closed or the ingress stops, a message goes back at once.
 */
import { fullJitterDelay, type BackoffPolicy } from '../../core/backoff.js';
import type { Clock } from '../../core/clock.js';
import type { Log } from '../../core/log.js';
import type { Delivery, Held } from './ingress-session.js';

/** A message's hold before it goes back to the queue is never shorter: no hot loop on a failing store. */
const MIN_REQUEUE_MS = 100;

export interface RequeueHoldsOptions {
  clock: Clock;
  log: Log;
  /** `amqp.retry`: the delay's ceiling, from its initial value up to its maximum. */
  retry: BackoffPolicy;
  /** In [0, 1): the jitter's source. */
  random: () => number;
  /** Whether the ingress is stopping: a message then goes back at once. */
  stopping: () => boolean;
  /** Each message nacked back after its hold. */
  onRequeued: () => void;
}

export class RequeueHolds {
  readonly #o: RequeueHoldsOptions;
  /** Since when (monotonic ms) sends fail for a passing reason; null while they succeed. The delay grows with it. */
  #failingSince: number | null = null;

  constructor(o: RequeueHoldsOptions) {
    this.#o = o;
  }

  /**
   * Holds the message (it stays unacked), then nacks it back to its queue. Resolves when it is
   * settled. The first failure after a success is logged; `accepting` ends the spell.
   */
  hold(d: Delivery, retryAfterMs: number, code: 'QUEUE_FULL' | 'INTERNAL'): Promise<void> {
    const now = this.#o.clock.now();
    if (this.#failingSince === null) {
      this.#failingSince = now;
      this.#o.log.warn({ event: 'amqp_deferring', errorCode: code },
        code === 'QUEUE_FULL' ? 'the send queue is full; queue messages go back to the queue and are tried again later'
          : 'queue messages cannot be stored now; they go back to the queue and are tried again later');
    }
    return this.#requeueAfter(d, Math.max(MIN_REQUEUE_MS, retryAfterMs, this.#delay(now - this.#failingSince)));
  }

  /**
   * Holds a message that failed for its client alone (at its own clients[].maxQueued) at least
   * `retryAfterMs`, then nacks it back. The sends are not failing: no spell is begun or logged.
   */
  holdOne(d: Delivery, retryAfterMs: number): Promise<void> {
    return this.#requeueAfter(d, Math.max(MIN_REQUEUE_MS, retryAfterMs, this.#delay(0)));
  }

  /** A send succeeded: the failing spell, if any, is over. */
  accepting(): void {
    if (this.#failingSince === null) return;
    this.#failingSince = null;
    this.#o.log.info({ event: 'amqp_accepting' }, 'queue messages are stored again');
  }

  #requeueAfter(d: Delivery, delay: number): Promise<void> {
    const { session } = d;
    if (!session.open || this.#o.stopping()) {
      session.settle(d, 'requeue');
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const held: Held = {
        delivery: d,
        timer: this.#o.clock.setTimer(delay, () => held.release()),
        release: () => {
          held.timer.cancel();
          if (!session.held.delete(held)) return;
          session.settle(d, 'requeue');
          this.#o.onRequeued();
          resolve();
        },
      };
      session.held.add(held);
    });
  }

  /**
   * Full jitter under a ceiling that grows with how long sends have been failing: the attempt
   * counted as one per `initialMs` of failure, so a prefetch of 500 messages failing together
   * do not push it to its maximum at once.
   */
  #delay(failingForMs: number): number {
    const attempt = Math.floor(Math.log2(1 + failingForMs / this.#o.retry.initialMs));
    return fullJitterDelay(this.#o.retry, attempt, this.#o.random());
  }
}
