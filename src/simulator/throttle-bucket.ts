/** The burst a throttle gets when none is set: 1/50 of the rate (20 ms worth), at least 1. */
export function defaultThrottleBurst(ratePerSecond: number): number {
  return Math.max(1, Math.floor(ratePerSecond / 50));
}

/**
 * The SMSC side of a per-bind rate limit: `rate` submit_sm per second, at most `burst` saved.
 * A submit_sm that finds no token is answered ESME_RTHROTTLED. Pure: time is an argument.
 */
export class ThrottleBucket {
  #rate: number;
  #burst: number;
  #tokens: number;
  #last: number;

  /** `rate` per second (> 0), `burst` tokens (≥ 1); starts full. */
  constructor(rate: number, burst: number, now: number) {
    this.#rate = rate;
    this.#burst = Math.max(1, burst);
    this.#tokens = this.#burst;
    this.#last = now;
  }

  /** Takes one token if there is one. */
  tryTake(now: number): boolean {
    this.#refill(now);
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return true;
    }
    return false;
  }

  /** Changes rate and burst at runtime, keeping the tokens saved so far (capped at the new burst). */
  reconfigure(rate: number, burst: number, now: number): void {
    this.#refill(now);
    this.#rate = rate;
    this.#burst = Math.max(1, burst);
    this.#tokens = Math.min(this.#tokens, this.#burst);
  }

  get tokens(): number {
    return this.#tokens;
  }

  #refill(now: number): void {
    const elapsed = now - this.#last;
    if (elapsed > 0) {
      this.#tokens = Math.min(this.#burst, this.#tokens + (elapsed * this.#rate) / 1000);
      this.#last = now;
    }
  }
}
