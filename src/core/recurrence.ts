/**
 * Recurring schedules as values: when each run of a series falls. A series keeps the wall-clock
 * time of its first run in its zone (the schedule's `gmt`), so 09:00 in Europe/London stays 09:00
 * across a daylight-saving change (the runs are then 23 or 25 hours apart), and a monthly series
 * that starts on the 31st runs on the last day of shorter months and on the 31st again after.
 * In core because the API checks a series with the rules the store advances it by. Pure.
 */
import { parseTimeZone, wallTimeToUtcMs, type SmscTimeZone } from './time-zone.js';

export const REPEAT_EVERY = ['DAILY', 'WEEKLY', 'MONTHLY'] as const;
export type RepeatEvery = (typeof REPEAT_EVERY)[number];

/** The most runs a series may ask for (`count`). */
export const MAX_REPEAT_COUNT = 1000;

/** A series: how often, and when it ends (the earlier of `count` and `until` when both are set). */
export interface Recurrence {
  every: RepeatEvery;
  /** Runs in all, the first included: 1 … MAX_REPEAT_COUNT; null: no limit. */
  count: number | null;
  /** No run after this instant (ms since the epoch); null: no limit. */
  until: number | null;
  /** The zone whose wall clock the runs keep: an offset, UTC or an IANA name (`parseTimeZone`). */
  zone: string;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** `text` as a RepeatEvery, any case; null when it is none. */
export function repeatEvery(text: string): RepeatEvery | null {
  const upper = text.trim().toUpperCase();
  return (REPEAT_EVERY as readonly string[]).includes(upper) ? (upper as RepeatEvery) : null;
}

function zoneOf(spec: string): SmscTimeZone {
  // Zones are checked when a series is made; one the runtime no longer knows keeps UTC's clock.
  return parseTimeZone(spec) ?? parseTimeZone('UTC')!;
}

/**
 * The instant of run `k` (0 is the first, at `first`) of a series that repeats `every` in `zone`.
 * The wall time of the first run is kept; a wall time that day does not have (clocks going
 * forward) moves forward by the gap, one it has twice (clocks going back) is the earlier instant.
 */
export function runAt(every: RepeatEvery, zone: SmscTimeZone, first: number, k: number): number {
  const wall = new Date(first + zone.offsetMinutes(first) * MINUTE_MS);
  const y = wall.getUTCFullYear();
  let month = wall.getUTCMonth();
  let d = wall.getUTCDate();
  switch (every) {
    case 'DAILY':
      d += k;
      break;
    case 'WEEKLY':
      d += 7 * k;
      break;
    case 'MONTHLY':
      month += k;
      // The anchor day, or the month's last day when it is shorter (day 0 of the next month).
      d = Math.min(d, new Date(Date.UTC(y, month + 1, 0)).getUTCDate());
      break;
  }
  const wallMs = Date.UTC(y, month, d, wall.getUTCHours(), wall.getUTCMinutes(), wall.getUTCSeconds(), wall.getUTCMilliseconds());
  return wallTimeToUtcMs(zone, wallMs);
}

/**
 * The first run of the series after `after` (exclusive), or null when the series has ended:
 * `runsDone` runs made (the one just made included) reached `count`, or that run would fall
 * after `until`. Runs missed while nothing ran them (`after` far past the previous one) are
 * passed over, not made late.
 */
export function nextRunAfter(rule: Recurrence, first: number, runsDone: number, after: number): number | null {
  if (rule.count !== null && runsDone >= rule.count) return null;
  const zone = zoneOf(rule.zone);
  // A guess short of the answer (run k is within an hour of k days, k weeks, or k months of at
  // least 28 and at most 31 days after the first), then forward one run at a time.
  const span = after - first;
  let k = Math.max(1, rule.every === 'MONTHLY' ? Math.floor(span / (31 * DAY_MS)) - 1 : Math.floor(span / (rule.every === 'DAILY' ? DAY_MS : 7 * DAY_MS)) - 1);
  let at = runAt(rule.every, zone, first, k);
  while (at <= after) at = runAt(rule.every, zone, first, ++k);
  return rule.until !== null && at > rule.until ? null : at;
}
