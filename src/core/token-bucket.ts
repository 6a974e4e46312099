/**
 * `rate` tokens per second, at most `burst` saved: a bind's pacing (one submit_sm costs one
 * token) and a client's rate limit (one send request costs one). Pure: time is an argument
 * (milliseconds, monotonic). A rate of 0 means unpaced: every take succeeds.
 */
export class TokenBucket {
  #tokens: number;
  #last: number;
  #rate: number;
  #burst: number;

  constructor(rate: number, burst: number, now: number) {
    this.#rate = rate;
    this.#burst = burst;
    this.#tokens = burst;
    this.#last = now;
  }

  get rate(): number {
    return this.#rate;
  }

  /** Tokens available at `now` (fractional). */
  available(now: number): number {
    this.#refill(now);
    return this.#rate === 0 ? Infinity : this.#tokens;
  }

  /** Changes the refill rate from `now` on; tokens saved so far are kept (never above burst). */
  setRate(rate: number, now: number): void {
    this.#refill(now);
    this.#rate = rate;
  }

  /**
   * Changes rate and burst from `now` on. Tokens saved so far are kept, down to the new burst:
   * a new configuration neither hands out a fresh burst nor takes away what was earned.
   */
  setLimits(rate: number, burst: number, now: number): void {
    this.#refill(now);
    this.#rate = rate;
    this.#burst = burst;
    this.#tokens = Math.min(this.#tokens, burst);
  }

  /** 0 when `cost` tokens are there to take, else the milliseconds until they are. Takes nothing. */
  wait(cost: number, now: number): number {
    if (this.#rate === 0) return 0;
    this.#refill(now);
    return this.#tokens >= cost ? 0 : Math.max(1, Math.ceil(((cost - this.#tokens) / this.#rate) * 1000));
  }

  /** Takes `cost` tokens and returns 0, or the milliseconds to wait before asking again. */
  take(cost: number, now: number): number {
    const wait = this.wait(cost, now);
    if (wait === 0 && this.#rate !== 0) this.#tokens -= cost;
    return wait;
  }

  /**
   * Empties the bucket and saves nothing before `until`: after a throttle pause the bind starts
   * from zero tokens, instead of spending a burst saved up while it was paused.
   */
  holdUntil(until: number): void {
    this.#tokens = 0;
    this.#last = Math.max(this.#last, until);
  }

  #refill(now: number): void {
    if (now <= this.#last) return;
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#last) * this.#rate) / 1000);
    this.#last = now;
  }
}
