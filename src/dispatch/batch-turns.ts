/**
 * Gives spaced batches (sendbulk's `delay`) their turns: the store releases each one's next
 * message when its turn comes (`SubmitClaims.releaseTurns`), and this wakes the store at the
 * earliest next turn rather than at the dispatcher's next poll, so a spacing shorter than the
 * poll is kept. The released message is then claimed like any other: a spaced batch holds no bind
 * while it waits, and no other batch waits for it.
 */
import type { Clock } from '../core/clock.js';
import { EarliestTimer } from '../core/earliest-timer.js';
import type { Log } from '../core/log.js';
import type { SubmitClaims } from '../store/claims.js';

export class BatchTurns {
  readonly #timer: EarliestTimer;
  #running = false;
  #again = false;
  #stopped = false;

  constructor(
    private readonly store: Pick<SubmitClaims, 'releaseTurns'>,
    private readonly clock: Clock,
    private readonly log: Log,
    /** Called after a pass that released messages: the dispatcher claims them. */
    private readonly released: () => void,
  ) {
    this.#timer = new EarliestTimer(clock, () => {
      this.run();
      return undefined;
    });
  }

  /** Runs a pass now (one at a time: a call during a pass runs another after it). */
  run(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = true;
    this.store.releaseTurns(this.clock.wallNow())
      .then(({ released, nextAt }) => {
        // Store times are wall-clock; the timer runs on the monotonic clock.
        if (nextAt !== null && !this.#stopped) this.#timer.arm(this.clock.now() + Math.max(0, nextAt - this.clock.wallNow()));
        if (released > 0) this.released();
      })
      .catch((e: unknown) => this.log.error({ event: 'store_error', err: e }, 'releasing the turns of spaced batches failed'))
      .finally(() => {
        this.#running = false;
        if (this.#again) {
          this.#again = false;
          this.run();
        }
      });
  }

  stop(): void {
    this.#stopped = true;
    this.#timer.cancel();
  }
}
