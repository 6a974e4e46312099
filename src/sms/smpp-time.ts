/**
 * Times on the SMPP wire, as values: the dates of a delivery receipt's text (SMPP v3.4
 * Appendix B), the absolute and relative time strings of SMPP v3.4 §7.1.1, and the SMSC's
 * time zone they are written in (`src/core/time-zone.ts`). Pure: no clock reads.
 */
import { ErrorCode, SmppdError } from '../core/errors.js';
import { parseTimeZone, utcFields, wallTimeToUtcMs, type SmscTimeZone } from '../core/time-zone.js';

const MINUTE_MS = 60_000;

/** ISO 8601 in UTC, whole seconds without a fraction: '2026-11-22T12:31:00Z'. */
export function formatIsoUtc(utcMs: number): string {
  const iso = new Date(utcMs).toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}

interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function isValidWallTime(t: WallTime): boolean {
  if (t.month < 1 || t.month > 12 || t.day < 1 || t.hour > 23 || t.minute > 59 || t.second > 59) return false;
  const daysInMonth = new Date(Date.UTC(2000, t.month, 0)).getUTCDate(); // 2000 is a leap year
  const leapOk = t.month !== 2 || t.day < 29 || (t.year % 4 === 0 && (t.year % 100 !== 0 || t.year % 400 === 0));
  return t.day <= daysInMonth && leapOk;
}

const digitsAt = (s: string, from: number, length: number): number => Number(s.slice(from, from + length));

/**
 * A receipt's `submit date` or `done date` (SMPP v3.4 Appendix B): 10 digits YYMMDDhhmm,
 * 12 digits YYMMDDhhmmss (common) or 14 digits YYYYMMDDhhmmss (some SMSCs), written in the
 * SMSC's local time. Two-digit years are 2000–2099. Returns ISO 8601 UTC, or null when the
 * value is not such a date or the zone is unknown.
 */
export function receiptDateToIso(value: string, timeZone: string | SmscTimeZone): string | null {
  const zone = typeof timeZone === 'string' ? parseTimeZone(timeZone) : timeZone;
  if (zone === null || !/^\d+$/.test(value)) return null;
  let t: WallTime;
  switch (value.length) {
    case 10:
    case 12:
      t = { year: 2000 + digitsAt(value, 0, 2), month: digitsAt(value, 2, 2), day: digitsAt(value, 4, 2),
        hour: digitsAt(value, 6, 2), minute: digitsAt(value, 8, 2), second: value.length === 12 ? digitsAt(value, 10, 2) : 0 };
      break;
    case 14:
      t = { year: digitsAt(value, 0, 4), month: digitsAt(value, 4, 2), day: digitsAt(value, 6, 2),
        hour: digitsAt(value, 8, 2), minute: digitsAt(value, 10, 2), second: digitsAt(value, 12, 2) };
      if (t.year < 1970) return null; // '00000000000000' and the like: no date, not year 0
      break;
    default:
      return null;
  }
  if (!isValidWallTime(t)) return null;
  const wall = utcFields(t.year, t.month, t.day, t.hour, t.minute, t.second);
  return formatIsoUtc(wallTimeToUtcMs(zone, wall));
}

/** A relative period of SMPP v3.4 §7.1.1.2: each field as written (00–99). */
export interface RelativeSmppTime {
  kind: 'relative';
  years: number;
  months: number;
  days: number;
  hours: number;
  minutes: number;
  seconds: number;
}

/** An absolute time of SMPP v3.4 §7.1.1.1, resolved to an instant. */
export interface AbsoluteSmppTime {
  kind: 'absolute';
  /** Milliseconds since the epoch. */
  utcMs: number;
  /** ISO 8601 UTC; tenths of a second appear as milliseconds when not zero. */
  iso: string;
}

export type SmppTime = AbsoluteSmppTime | RelativeSmppTime;

/** SMPP v3.4 §7.1.1: YYMMDDhhmmss t nn p, 16 characters (the NUL of the C-Octet String not included). */
const SMPP_TIME = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d)(\d{2})([+\-R])$/;

/**
 * Reads an SMPP v3.4 §7.1.1 time string. Absolute (p '+' or '-'): the local time is nn quarter
 * hours (00–48) ahead of (+) or behind (-) UTC, t is tenths of a second, YY is 2000–2099.
 * Relative (p 'R', §7.1.1.2): a period, t and nn are 0. Returns null for '' and anything else.
 */
export function parseSmppTime(value: string): SmppTime | null {
  const m = SMPP_TIME.exec(value);
  if (!m) return null;
  const [yy, mo, dd, hh, mi, ss, t, nn] = m.slice(1, 9).map(Number) as [number, number, number, number, number, number, number, number];
  if (m[9] === 'R') return { kind: 'relative', years: yy, months: mo, days: dd, hours: hh, minutes: mi, seconds: ss };
  const wallTime: WallTime = { year: 2000 + yy, month: mo, day: dd, hour: hh, minute: mi, second: ss };
  if (nn > 48 || !isValidWallTime(wallTime)) return null;
  const offsetMs = (m[9] === '-' ? -1 : 1) * nn * 15 * MINUTE_MS;
  const utcMs = utcFields(wallTime.year, mo, dd, hh, mi, ss, t * 100) - offsetMs;
  return { kind: 'absolute', utcMs, iso: formatIsoUtc(utcMs) };
}

/** An absolute SMPP v3.4 §7.1.1.1 time as ISO 8601 UTC; null for a relative time or anything invalid. */
export function smppAbsoluteTimeToIso(value: string): string | null {
  const t = parseSmppTime(value);
  return t?.kind === 'absolute' ? t.iso : null;
}

/** The longest validity `validityPeriod` writes: 99 days and 23 hours (DD is two digits). */
export const MAX_VALIDITY_HOURS = 99 * 24 + 23;

const two = (n: number): string => String(n).padStart(2, '0');

/**
 * A validity_period (SMPP v3.4 §5.2.15) of `hours` from submission, as a relative time
 * (§7.1.1.2, YYMMDDhhmmss000R): 24 hours → '000001000000000R', 6 → '000000060000000R'.
 * Hours past 23 become days because SMSCs check hh ≤ 23. `hours` is an integer from 1 to
 * MAX_VALIDITY_HOURS: the ingress validates expiryHour, so anything else is a bug (INTERNAL).
 */
export function validityPeriod(hours: number): string {
  if (!Number.isInteger(hours) || hours < 1 || hours > MAX_VALIDITY_HOURS) {
    throw new SmppdError(ErrorCode.INTERNAL, `validity must be 1–${MAX_VALIDITY_HOURS} whole hours`, { hours });
  }
  return `0000${two(Math.floor(hours / 24))}${two(hours % 24)}0000000R`;
}
