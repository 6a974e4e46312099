import type { Clock, TimerHandle } from './clock.js';

/**
 * One timer for many due times: armed for the earliest asked for, it calls `fire(now)`, which
 * returns the next due time (or undefined when none is left), and arms itself for that.
 */
export class EarliestTimer {
  #armed: { at: number; handle: TimerHandle } | undefined;

  constructor(private readonly clock: Clock, private readonly fire: (now: number) => number | undefined) {}

  /** Makes sure the timer goes off by `at` (monotonic ms). */
  arm(at: number): void {
    if (this.#armed && this.#armed.at <= at) return;
    this.#armed?.handle.cancel();
    const handle = this.clock.setTimer(at - this.clock.now(), () => {
      this.#armed = undefined;
      const next = this.fire(this.clock.now());
      if (next !== undefined) this.arm(next);
    });
    this.#armed = { at, handle };
  }

  cancel(): void {
    this.#armed?.handle.cancel();
    this.#armed = undefined;
  }
}
