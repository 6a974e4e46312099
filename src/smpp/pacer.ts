import { TokenBucket } from '../core/token-bucket.js';
import { RateController, type Learned, type RateControlSettings } from './rate-controller.js';

/** Longest a paced sender waits to gather tokens before sending them together (ms). */
const MAX_BATCH_WAKE_MS = 10;

/**
 * A token bucket at the rate its `RateController` finds the SMSC accepts: a bind's pacing, or an
 * account's shared by the binds of an upstream. `maxRate` 0 is unpaced until the first throttle.
 * Pure: time is an argument.
 */
export class Pacer {
  readonly #bucket: TokenBucket;
  readonly #pace: RateController;
  #throttledElsewhere = 0;

  constructor(
    private readonly settings: RateControlSettings,
    /** Tokens it may save up at `maxRate` (scaled with the rate in force; 20 ms worth when unpaced). */
    private readonly burst: number,
    now: number,
    /** Hears what each measurement learned. */
    private readonly learned: (learned: Learned | undefined) => void,
  ) {
    this.#bucket = new TokenBucket(settings.maxRate, burst, now);
    this.#pace = new RateController(settings, now);
  }

  /**
   * 0 when a submit_sm may go now (take it with `take`), else the milliseconds to wait: a pause, or
   * until a token is due, then some more so that several go out in one wake-up.
   */
  wait(now: number): number {
    this.learned(this.#pace.tick(now));
    const pause = this.#pace.pauseLeft(now);
    if (pause > 0) return pause;
    const rate = this.#pace.rate(now);
    if (!Number.isFinite(rate)) return 0;
    const burst = pacingBurst(rate, this.settings.maxRate, this.burst);
    this.#bucket.setLimits(rate, burst, now);
    const wait = this.#bucket.wait(1, now);
    if (wait === 0) return 0;
    this.#pace.noteLimited();
    // A timer and a write per millisecond cost more CPU than the messages themselves; half the
    // burst interval keeps the bucket from filling, so no rate is lost.
    return Math.max(wait, Math.min(MAX_BATCH_WAKE_MS, (burst / rate) * 500));
  }

  /** Takes the token `wait` found. */
  take(now: number): void {
    if (Number.isFinite(this.#pace.rate(now))) this.#bucket.take(1, now);
  }

  onAccepted(now: number): void {
    this.learned(this.#pace.onAccepted(now));
  }

  /** A throttle answer: true when it started a measurement (the bucket then starts from empty). */
  onThrottled(now: number): boolean {
    if (this.#pace.onThrottled(now) !== 'measuring') return false;
    this.#bucket.holdUntil(now + this.#pace.pauseLeft(now));
    return true;
  }

  /** A throttle answer another pacer measured (the account's): counted here only. */
  countThrottled(): void {
    this.#throttledElsewhere++;
  }

  /** Starts from a limit learned before, `backoff` below it. */
  resume(limit: number, now: number): void {
    this.#pace.resume(limit, now);
  }

  get measuring(): boolean {
    return this.#pace.measuring;
  }

  get limit(): number | undefined {
    return this.#pace.limit;
  }

  get episodes(): number {
    return this.#pace.episodes;
  }

  /** Throttle answers, those measured elsewhere included. */
  get throttled(): number {
    return this.#pace.throttled + this.#throttledElsewhere;
  }

  pauseLeft(now: number): number {
    return this.#pace.pauseLeft(now);
  }

  /** The rate in force; 0 = unpaced. */
  rate(now: number): number {
    const rate = this.#pace.rate(now);
    return Number.isFinite(rate) ? rate : 0;
  }

  tokens(now: number): number {
    return Number.isFinite(this.#pace.rate(now)) ? this.#bucket.available(now) : 0;
  }

  isSlowed(now: number): boolean {
    return this.#pace.isSlowed(now);
  }
}

/**
 * The burst a token bucket allows at `rate` when its configured ceiling is `ceiling` with
 * `burst`: the same time's worth as configured, so a sender slowed to what the SMSC accepts does
 * not empty the SMSC's own, smaller bucket in one go. Without a ceiling (0, unpaced until it
 * learned a limit): 20 ms worth, as a paced bind gets by default. At least 1.
 */
function pacingBurst(rate: number, ceiling: number, burst: number): number {
  if (ceiling > 0) return Math.max(1, (burst * Math.min(rate, ceiling)) / ceiling);
  return Math.max(1, Math.ceil(rate / 50));
}
