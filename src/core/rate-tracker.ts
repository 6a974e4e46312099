/**
 * Counts events in a sliding window of small buckets and remembers the highest count any
 * window ever held: with the defaults, the highest number of submit_sm in any one second,
 * measured in 10 ms steps. Pure: time is an argument (monotonic milliseconds).
 */
export class RateTracker {
  readonly #buckets: Uint32Array;
  readonly #bucketMs: number;
  #head = 0;
  #started = false;
  #sum = 0;
  #max = 0;

  /** `windowMs` must be a multiple of `bucketMs`; defaults: a 1,000 ms window of 10 ms buckets. */
  constructor(windowMs = 1_000, bucketMs = 10) {
    this.#bucketMs = bucketMs;
    this.#buckets = new Uint32Array(Math.max(1, Math.round(windowMs / bucketMs)));
  }

  record(now: number, count = 1): void {
    this.#advance(now);
    this.#buckets[this.#head % this.#buckets.length]! += count;
    this.#sum += count;
    if (this.#sum > this.#max) this.#max = this.#sum;
  }

  /** Events in the window that ends at `now`. */
  current(now: number): number {
    this.#advance(now);
    return this.#sum;
  }

  /** The highest count any window held since the start or the last reset. */
  get max(): number {
    return this.#max;
  }

  reset(): void {
    this.#buckets.fill(0);
    this.#sum = 0;
    this.#max = 0;
    this.#started = false;
  }

  #advance(now: number): void {
    const index = Math.floor(now / this.#bucketMs);
    if (!this.#started) {
      this.#head = index;
      this.#started = true;
      return;
    }
    if (index <= this.#head) return; // a monotonic clock never goes back; same bucket
    const n = this.#buckets.length;
    const steps = Math.min(index - this.#head, n);
    for (let i = 1; i <= steps; i++) {
      const slot = (this.#head + i) % n;
      this.#sum -= this.#buckets[slot]!;
      this.#buckets[slot] = 0;
    }
    this.#head = index;
  }
}
