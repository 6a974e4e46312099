/**
 * The scheduling fields of a send (messaging-service-api.md §4.1: isSchedule, time, gmt, repeat;
 * sendbulk's bulkRequest: schedule and the same three). The provider leaves the format of
 * `time` to each account; smppd takes a local date-time, `YYYY-MM-DD HH:mm[:ss[.SSS]]` (or with
 * a `T`), in the offset `gmt` (default +00:00), as the chat app channel writes it.
 */
import { parseTimeZone } from '../core/time-zone.js';
import { ApiError } from './errors.js';
import { asksToRepeat, seriesFrom, type RepeatInput, type ScheduleRepeat } from './recurrence.js';

const LOCAL_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?$/;
/** A time this far behind the clock still counts as now (a client rounding to the minute). */
export const PAST_GRACE_MS = 60_000;

export type ParsedTime = { ok: true; at: number } | { ok: false; field: 'time' | 'gmt'; message: string };

/** The instant (ms since the epoch) that a local date-time in `gmt` names. Pure. */
export function parseScheduleTime(time: string, gmt: string | undefined): ParsedTime {
  const zone = parseTimeZone(gmt === undefined || gmt === '' ? '+00:00' : gmt);
  if (zone === null) return { ok: false, field: 'gmt', message: 'must be an offset like +04:00 or -05:30 (or UTC, or a zone name like Asia/Dubai)' };
  const m = LOCAL_TIME.exec(time.trim());
  const bad = { ok: false, field: 'time', message: "must be a local date-time 'YYYY-MM-DD HH:mm:ss' (or with T), in the offset given by gmt" } as const;
  if (!m) return bad;
  const n = (i: number): number => Number(m[i] ?? '0');
  const [year, month, day, hour, minute, second] = [n(1), n(2), n(3), n(4), n(5), n(6)];
  const ms = m[7] === undefined ? 0 : Number(m[7].padEnd(3, '0'));
  const local = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const check = new Date(local);
  // Date.UTC rolls 2026-02-30 over to March: a date that does not round-trip does not exist.
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day
    || check.getUTCHours() !== hour || check.getUTCMinutes() !== minute || check.getUTCSeconds() !== second) return bad;
  // A zone's offset depends on the instant; the one at the local reading is right except within a DST change.
  const guess = local - zone.offsetMinutes(local) * 60_000;
  return { ok: true, at: local - zone.offsetMinutes(guess) * 60_000 };
}

/** The scheduling fields as a request gives them; `flag` is isSchedule (sendSms) or schedule (bulkRequest). */
export interface ScheduleFields {
  flag: boolean | null | undefined;
  time: string | null | undefined;
  gmt: string | null | undefined;
  repeat: RepeatInput;
}

/**
 * The schedule a request asks for, or undefined to send at once. Throws VALIDATION naming the
 * field (`prefix` is '' for sendSms, 'bulkRequest.' for sendbulk) when the flag is set without
 * a time, when a time is set without the flag (rather than send a timed message now), when the
 * time is malformed, or when it is past.
 */
export function scheduleFrom(f: ScheduleFields, flagName: string, prefix: string, now: number): ({ runAt: number } & ScheduleRepeat) | undefined {
  const time = f.time ?? '';
  if (f.flag !== true) {
    if (time !== '') throw new ApiError('VALIDATION', `${prefix}time: is set but ${prefix}${flagName} is not true; set ${flagName} to true to schedule, or leave time out to send now`);
    if (asksToRepeat(f.repeat)) throw new ApiError('VALIDATION', `${prefix}repeat: needs ${prefix}${flagName} true and a time (the first run)`);
    return undefined;
  }
  if (time === '') throw new ApiError('VALIDATION', `${prefix}time: is required when ${flagName} is true`);
  const parsed = parseScheduleTime(time, f.gmt ?? undefined);
  if (!parsed.ok) throw new ApiError('VALIDATION', `${prefix}${parsed.field}: ${parsed.message}`);
  if (parsed.at < now - PAST_GRACE_MS) {
    throw new ApiError('VALIDATION', `${prefix}time: is in the past (${new Date(parsed.at).toISOString()}; now is ${new Date(now).toISOString()})`);
  }
  return { runAt: parsed.at, ...seriesFrom(f.repeat, parsed.at, f.gmt ?? undefined, prefix, parseScheduleTime) };
}

/**
 * sendSms's `delay` (seconds, validated): the message becomes a schedule of one, released that
 * long after now, or after the scheduled time when there is one (a recurring schedule's first
 * run, and so every run, comes that much later). No delay: the schedule as it was.
 */
export function delayedSchedule(
  schedule: ({ runAt: number } & ScheduleRepeat) | undefined, delaySeconds: number | null | undefined, now: number,
): ({ runAt: number } & ScheduleRepeat) | undefined {
  if (delaySeconds === undefined || delaySeconds === null || delaySeconds === 0) return schedule;
  const delayMs = Math.round(delaySeconds * 1000);
  return schedule ? { ...schedule, runAt: schedule.runAt + delayMs } : { runAt: now + delayMs, repeat: null };
}

/** sendbulk's `delay` (seconds between messages, validated) as the batch's spacing; null: none. */
export function spacingMsOf(delaySeconds: number | null | undefined): number | null {
  const ms = Math.round((delaySeconds ?? 0) * 1000);
  return ms > 0 ? ms : null;
}
