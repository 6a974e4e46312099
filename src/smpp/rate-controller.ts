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

/**
 * A measurement ends after this long and at least MEASURE_ACCEPTED acceptances (or MEASURE_MAX_MS):
 * long enough that a late read of a few tens of milliseconds on either side moves it little.
 */
const MEASURE_MS = 200;
const MEASURE_ACCEPTED = 100;
const MEASURE_MAX_MS = 2_000;
/**
 * A measurement's time is cut in slots this long (ms): refusals in a third of them or more mean the
 * SMSC refused all along (a late read's backlog is refused in one or two), and the SMSC's rate is
 * read from the slots' acceptances with the busiest and the emptiest quarter left out (a late read
 * empties some slots and crowds the next).
 */
const SLOT_MS = 20;
/** Seconds in which the rate climbs half the way back to the learned limit. */
const APPROACH_HALF_LIFE_S = 2;

interface Measurement {
  start: number;
  accepted: number;
  /** Throttle answers in it, the first one included. */
  refused: number;
  /** The SLOT_MS slots of the measurement (the first one left out) in which a throttle answer came. */
  throttleSlots: Set<number>;
  /** The rate the sender was at when the first throttle came (Infinity: unpaced). */
  rateAtStart: number;
  /** Acceptances per SLOT_MS slot from the start. */
  acceptedSlots: number[];
}

/**
 * Finds and follows the rate an SMSC accepts, for one bind or for an account shared by several.
 *
 * A throttle answer (ESME_RTHROTTLED, ESME_RMSGQFUL) starts a short measurement at the rate in
 * force: while the sender goes on, every answer is counted, per 20 ms slot, for at least 200 ms and
 * 100 acceptances. Refused all along (not in one burst) and taking clearly less than was sent, the
 * SMSC was saturated: its token bucket was empty and refilled at its limit, which is what it
 * accepted per slot (`slotRate`). Otherwise it was a blip at the top of its limit (a burst, a late
 * read, a probe just past it), and the rate the sender was at is the limit. The rate then settles
 * `backoff` below the limit, climbs back toward it (half the way every 2 s, at least `probe` of it
 * a second), and past it faster and faster (the limit may have risen), up to `maxRate`, until the
 * next throttle measures again. Halving instead, as TCP's AIMD does, leaves a quarter of the SMSC's
 * capacity unused on average; this settles within a few per cent of it.
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

  /** `maxRate`, or Infinity for none. */
  readonly #ceiling: number;

  constructor(private readonly settings: RateControlSettings, now: number) {
    this.#ceiling = settings.maxRate > 0 ? settings.maxRate : Infinity;
    this.#rate = this.#ceiling;
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
    const slot = Math.floor((now - m.start) / SLOT_MS);
    m.acceptedSlots[slot] = (m.acceptedSlots[slot] ?? 0) + 1;
    return this.#maybeConclude(now);
  }

  /** The SMSC throttled a submit_sm at `now`. */
  onThrottled(now: number): ThrottleEffect {
    this.#throttled++;
    const m = this.#measurement;
    if (m !== undefined) {
      m.refused++;
      const slot = Math.floor((now - m.start) / SLOT_MS);
      if (slot > 0) m.throttleSlots.add(slot);
      return 'counted';
    }
    this.#update(now);
    this.#episodes++;
    this.#measurement = { start: now, accepted: 0, refused: 1, throttleSlots: new Set(), acceptedSlots: [], rateAtStart: this.#rate };
    if (this.settings.pauseMs > 0) this.#pausedUntil = now + this.settings.pauseMs;
    return 'measuring';
  }

  /** Starts from a limit learned before (an account's share that changed): `backoff` below it. */
  resume(limit: number, now: number): void {
    this.#settle(limit, now);
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
    return this.#limit !== undefined && this.rate(now) < this.#ceiling;
  }

  #maybeConclude(now: number): Learned | undefined {
    const m = this.#measurement!;
    const elapsed = now - m.start;
    if (elapsed < MEASURE_MS || (m.accepted < MEASURE_ACCEPTED && elapsed < MEASURE_MAX_MS)) return undefined;
    this.#measurement = undefined;
    const accepted = (m.accepted * 1000) / elapsed;
    // Saturated (refused all along, taking clearly less than was sent): the SMSC's rate is its limit.
    // Otherwise the rate the sender was at nearly was: a blip, or a probe just past the limit.
    const slots = answeredSlots(m, elapsed);
    const refusedAllAlong = slots.length > 0 && slots.filter((i) => m.throttleSlots.has(i)).length * 3 >= slots.length;
    const saturated = refusedAllAlong && accepted < m.rateAtStart * (1 - this.settings.backoff);
    const previous = this.#limit;
    this.#settle(saturated ? saturatedRate(m, slots) : Math.max(accepted, m.rateAtStart), now);
    return { limit: this.#limit!, rate: this.#rate, previous };
  }

  /** Takes `limit` as the SMSC's (within minRate and the ceiling) and runs `backoff` below it from `now`. */
  #settle(limit: number, now: number): void {
    this.#limit = Math.min(this.#ceiling, Math.max(this.settings.minRate, limit));
    this.#rate = Math.max(this.settings.minRate, Math.min(this.#ceiling, this.#limit * (1 - this.settings.backoff)));
    this.#aboveSince = undefined;
    this.#lastUpdate = now;
    this.#limited = false;
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
    const step = limit * this.settings.probe;
    if (this.#rate < limit) {
      // Half the way back to the limit every APPROACH_HALF_LIFE_S, at least `probe` of it a second:
      // fast after a deep cut (a measurement that a late read spoilt), gentle near the limit.
      const approach = (limit - this.#rate) * (1 - 2 ** (-seconds / APPROACH_HALF_LIFE_S));
      this.#rate = Math.min(limit, this.#rate + Math.max(approach, step * seconds));
      return;
    }
    // Past the limit with no throttle: it may have risen. Each second above it doubles the climb.
    this.#aboveSince ??= now;
    const above = (now - this.#aboveSince) / 1000;
    this.#rate = Math.min(this.#ceiling, this.#rate + step * 2 ** Math.min(above, 20) * seconds);
  }
}

/**
 * The complete slots after the first that tell something of the SMSC: all of them, but when the
 * sender sent enough for an answer or more in every slot, only those in which an answer came (one
 * with none is a late read on one side or the other, not an SMSC that accepted nothing).
 */
function answeredSlots(m: Measurement, elapsed: number): number[] {
  const slots = Array.from({ length: Math.max(0, Math.floor(elapsed / SLOT_MS) - 1) }, (_, i) => i + 1);
  if ((m.rateAtStart * SLOT_MS) / 1000 < 2) return slots;
  return slots.filter((i) => (m.acceptedSlots[i] ?? 0) > 0 || m.throttleSlots.has(i));
}

/**
 * What a saturated SMSC accepts: the rate of its acceptances per slot (`slotRate`), or, when the
 * sender was paced, the share of what it sent that the SMSC accepted times that pace, whichever is
 * higher. A late read on this side slows both acceptances and refusals alike, so the share holds
 * when the acceptances per slot come out low; it is never more than the pace.
 */
function saturatedRate(m: Measurement, slots: readonly number[]): number {
  const perSlot = slotRate(m.acceptedSlots, slots);
  if (!Number.isFinite(m.rateAtStart)) return perSlot;
  return Math.max(perSlot, (m.rateAtStart * m.accepted) / (m.accepted + m.refused));
}

/**
 * The rate (per second) of the acceptances in `slots`, from the middle half of their counts (the
 * interquartile mean): robust to a late read on either side, which empties some slots and crowds
 * the next.
 */
function slotRate(acceptedSlots: readonly number[], slots: readonly number[]): number {
  const counts = slots.map((i) => acceptedSlots[i] ?? 0).sort((a, b) => a - b);
  const quarter = counts.length >= 4 ? Math.floor(counts.length / 4) : 0;
  const middle = counts.slice(quarter, counts.length - quarter);
  return middle.length === 0 ? 0 : (middle.reduce((n, c) => n + c, 0) * 1000) / (middle.length * SLOT_MS);
}
