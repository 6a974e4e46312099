import type { Log } from '../core/log.js';

/** How a sender finds the rate an SMSC really accepts. All times in milliseconds. */
export interface RateControlSettings {
  /** The configured ceiling (submit_sm/s); 0 = none: unpaced until the first throttle. */
  maxRate: number;
  /** The rate never goes below this (submit_sm/s, > 0). */
  minRate: number;
  /** Pause after a throttle answer before sending again (0 = none). */
  pauseMs: number;
  /** How far below the learned limit the rate settles, as a fraction (0.03 = 3 % below). */
  backoff: number;
  /** How fast the rate climbs back toward the learned limit: a fraction of it per second. */
  probe: number;
}

/** What a throttle answer started: a measurement, or nothing new (one is running). */
export type ThrottleEffect = 'measuring' | 'counted';

/** What a measurement concluded: the SMSC accepts `limit`/s, so the sender now runs at `rate`. */
export interface Learned {
  limit: number;
  rate: number;
  /** The limit learned before, if any. */
  previous: number | undefined;
}

/** A learned limit this much (a fraction) away from the last one announced is logged. */
const ANNOUNCE_CHANGE = 0.05;

/**
 * A function that logs a learned limit when it is new or moved more than 5 % from the last one
 * it logged (`rate_limit_learned`), so that the probes that find the same limit again stay quiet.
 */
export function limitAnnouncer(log: Log, message: string): (learned: Learned | undefined) => void {
  let announced: number | undefined;
  return (learned) => {
    if (learned === undefined) return;
    if (announced !== undefined && Math.abs(learned.limit - announced) <= announced * ANNOUNCE_CHANGE) return;
    log.info({ event: 'rate_limit_learned', limit: roundRate(learned.limit), rate: roundRate(learned.rate), previous: announced === undefined ? null : roundRate(announced) }, message);
    announced = learned.limit;
  };
}

/** A rate for logs and stats: one decimal; 0 for unpaced (Infinity). */
export function roundRate(rate: number): number {
  return Number.isFinite(rate) ? Math.round(rate * 10) / 10 : 0;
}

/** A measurement ends after this long and at least MEASURE_ACCEPTED acceptances (or MEASURE_MAX_MS). */
const MEASURE_MS = 100;
const MEASURE_ACCEPTED = 50;
const MEASURE_MAX_MS = 2_000;

interface Measurement {
  start: number;
  accepted: number;
  /** A throttle answer came in the second half: the SMSC refused all along, it was saturated. */
  lateThrottle: boolean;
  /** The rate the sender was at when the first throttle came (Infinity: unpaced). */
  rateAtStart: number;
}

/**
 * Finds and follows the rate an SMSC accepts, for one bind or for an account shared by several.
 *
 * A throttle answer (ESME_RTHROTTLED, ESME_RMSGQFUL) starts a short measurement at the rate in
 * force: while the sender goes on, every acceptance is counted for at least 100 ms and 50
 * acceptances. Refused all along, the SMSC was saturated, so what it accepted in that time is its
 * limit (its token bucket refilled at that rate, and was empty); refused only at the start, it was
 * a blip at the top of its limit (a burst, a late read), and the rate the sender was at is the
 * limit. The rate then settles `backoff` below the limit, climbs back toward it by `probe` of it
 * per second, and past it climbs faster and faster (the limit may have risen), up to `maxRate`,
 * until the next throttle measures again. Halving instead, as TCP's AIMD does, leaves a quarter
 * of the SMSC's capacity unused on average; this settles within a few per cent of it.
 *
 * The rate climbs only while the sender is held back by it (`noteLimited`): a bind with no work
 * does not creep up to its ceiling and overrun the SMSC when work comes. Pure: time is an argument.
 */
export class RateController {
  /** The pacing rate; Infinity while unpaced. */
  #rate: number;
  #limit: number | undefined;
  #measurement: Measurement | undefined;
  #lastUpdate: number;
  /** The sender waited on this rate since the last update. */
  #limited = false;
  /** Since when the rate has been above the learned limit, unthrottled. */
  #aboveSince: number | undefined;
  #pausedUntil = -Infinity;
  #episodes = 0;
  #throttled = 0;

  constructor(private readonly settings: RateControlSettings, now: number) {
    this.#rate = settings.maxRate > 0 ? settings.maxRate : Infinity;
    this.#lastUpdate = now;
  }

  /** Measurements so far: throttle answers that found none running. */
  get episodes(): number {
    return this.#episodes;
  }

  /** Throttle answers so far. */
  get throttled(): number {
    return this.#throttled;
  }

  /** The limit the last measurement found (submit_sm/s); undefined before the first. */
  get limit(): number | undefined {
    return this.#limit;
  }

  get measuring(): boolean {
    return this.#measurement !== undefined;
  }

  /** The sender had work and waited for this rate. */
  noteLimited(): void {
    this.#limited = true;
  }

  /** The SMSC accepted a submit_sm at `now`. Returns what a measurement ending now learned. */
  onAccepted(now: number): Learned | undefined {
    const m = this.#measurement;
    if (m === undefined) return undefined;
    m.accepted++;
    return this.#maybeConclude(now);
  }

  /** The SMSC throttled a submit_sm at `now`. */
  onThrottled(now: number): ThrottleEffect {
    this.#throttled++;
    const m = this.#measurement;
    if (m !== undefined) {
      if (now - m.start >= MEASURE_MS / 2) m.lateThrottle = true;
      return 'counted';
    }
    this.#update(now);
    this.#episodes++;
    this.#measurement = { start: now, accepted: 0, lateThrottle: false, rateAtStart: this.#rate };
    if (this.settings.pauseMs > 0) this.#pausedUntil = now + this.settings.pauseMs;
    return 'measuring';
  }

  /** Starts from a limit learned before (an account's share that changed): `backoff` below it. */
  resume(limit: number, now: number): void {
    const ceiling = this.settings.maxRate > 0 ? this.settings.maxRate : Infinity;
    this.#limit = Math.min(ceiling, Math.max(this.settings.minRate, limit));
    this.#rate = Math.max(this.settings.minRate, Math.min(ceiling, this.#limit * (1 - this.settings.backoff)));
    this.#lastUpdate = now;
  }

  /** Ends a measurement that is due even when no acceptance comes to end it (call from time to time). */
  tick(now: number): Learned | undefined {
    return this.#measurement === undefined ? undefined : this.#maybeConclude(now);
  }

  /** Milliseconds until the sender may send again (0 when not paused). */
  pauseLeft(now: number): number {
    return now < this.#pausedUntil ? this.#pausedUntil - now : 0;
  }

  /** The rate in force at `now` (Infinity = unpaced). */
  rate(now: number): number {
    this.#update(now);
    return this.#rate;
  }

  /** True while a throttle holds the rate below its ceiling (or pauses the sender). */
  isSlowed(now: number): boolean {
    if (this.pauseLeft(now) > 0 || this.#measurement !== undefined) return true;
    const ceiling = this.settings.maxRate > 0 ? this.settings.maxRate : Infinity;
    return this.#limit !== undefined && this.rate(now) < ceiling;
  }

  #maybeConclude(now: number): Learned | undefined {
    const m = this.#measurement!;
    const elapsed = now - m.start;
    if (elapsed < MEASURE_MS || (m.accepted < MEASURE_ACCEPTED && elapsed < MEASURE_MAX_MS)) return undefined;
    this.#measurement = undefined;
    const accepted = (m.accepted * 1000) / elapsed;
    // Saturated: the SMSC's acceptances are its limit. A blip: the rate we were at nearly was.
    const limit = Math.max(this.settings.minRate, m.lateThrottle || !Number.isFinite(m.rateAtStart) ? accepted : Math.max(accepted, m.rateAtStart));
    const ceiling = this.settings.maxRate > 0 ? this.settings.maxRate : Infinity;
    const previous = this.#limit;
    this.#limit = Math.min(limit, ceiling);
    this.#rate = Math.max(this.settings.minRate, Math.min(ceiling, this.#limit * (1 - this.settings.backoff)));
    this.#aboveSince = undefined;
    this.#lastUpdate = now;
    this.#limited = false;
    return { limit: this.#limit, rate: this.#rate, previous };
  }

  /** Climbs from the last update to `now`, if the sender was held back by the rate meanwhile. */
  #update(now: number): void {
    if (now <= this.#lastUpdate) return;
    const seconds = (now - this.#lastUpdate) / 1000;
    this.#lastUpdate = now;
    const limit = this.#limit;
    if (!this.#limited || limit === undefined || this.#measurement !== undefined || !Number.isFinite(this.#rate)) {
      this.#limited = false;
      return;
    }
    this.#limited = false;
    const ceiling = this.settings.maxRate > 0 ? this.settings.maxRate : Infinity;
    const step = limit * this.settings.probe;
    if (this.#rate < limit) {
      this.#rate = Math.min(limit, this.#rate + step * seconds);
      return;
    }
    // Past the limit with no throttle: it may have risen. Each second above it doubles the climb.
    this.#aboveSince ??= now;
    const above = (now - this.#aboveSince) / 1000;
    this.#rate = Math.min(ceiling, this.#rate + step * 2 ** Math.min(above, 20) * seconds);
  }
}
