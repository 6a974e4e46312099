/** How a bind reacts to ESME_RTHROTTLED / ESME_RMSGQFUL. All times in milliseconds. */
export interface ThrottleSettings {
  /** The configured rate (submit_sm/s); 0 = unpaced. The controller never goes above it. */
  maxRate: number;
  /** Pause after a throttle answer before sending again. Default 1,000. */
  pauseMs: number;
  /** The rate never drops below this (submit_sm/s). Default 10. Must be > 0. */
  minRate: number;
  /** Additive increase per second once the pause is over (submit_sm/s per s). */
  recoverPerSecond: number;
}

/**
 * AIMD rate control for one bind (TCP's congestion rule applied to an SMSC's rate limit):
 * a throttle answer halves the rate and pauses the bind; afterwards the rate climbs back
 * linearly. Several throttle answers for requests that were already in flight arrive together;
 * only the first one of a pause counts, so one overload does not collapse the rate to the floor.
 * Pure: time is an argument. An unpaced bind (maxRate 0) only pauses.
 */
export class ThrottleController {
  #rate: number;
  #pausedUntil = -Infinity;
  #lastUpdate: number;
  #episodes = 0;

  constructor(private readonly settings: ThrottleSettings, now: number) {
    this.#rate = settings.maxRate;
    this.#lastUpdate = now;
  }

  /** Throttle episodes so far (each one halved the rate once). */
  get episodes(): number {
    return this.#episodes;
  }

  /** Records a throttle answer at `now`. Returns true when it started a new episode. */
  onThrottled(now: number): boolean {
    if (now < this.#pausedUntil) return false;
    this.#episodes++;
    this.#pausedUntil = now + this.settings.pauseMs;
    this.#lastUpdate = this.#pausedUntil;
    if (this.settings.maxRate > 0) this.#rate = Math.max(this.settings.minRate, this.#rate / 2);
    return true;
  }

  /** Milliseconds until the bind may send again (0 when not paused). */
  pauseLeft(now: number): number {
    return now < this.#pausedUntil ? this.#pausedUntil - now : 0;
  }

  /** The rate in force at `now` (0 = unpaced). */
  rate(now: number): number {
    if (this.settings.maxRate === 0) return 0;
    if (now > this.#lastUpdate && this.#rate < this.settings.maxRate) {
      this.#rate = Math.min(this.settings.maxRate, this.#rate + ((now - this.#lastUpdate) / 1000) * this.settings.recoverPerSecond);
    }
    if (now > this.#lastUpdate) this.#lastUpdate = now;
    return this.#rate;
  }

  /** True while the rate is below the configured one or the bind is paused. */
  isSlowed(now: number): boolean {
    return this.pauseLeft(now) > 0 || (this.settings.maxRate > 0 && this.rate(now) < this.settings.maxRate);
  }
}
