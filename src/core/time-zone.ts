/**
 * An SMSC's time zone as a value: 'UTC', a fixed offset or an IANA name, resolved with `Intl`
 * (which reads the zone database, never the clock). In core because the configuration checks
 * the setting with the same rules the receipt parser applies. Pure.
 */

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** Offsets an IANA zone keeps computed (see `ianaZone`). */
const KNOWN_OFFSETS = 512;

/**
 * The SMSC's time zone, in which it writes receipt dates. Build it once per upstream with
 * `parseTimeZone` when dates are converted often: resolving an IANA name costs an
 * `Intl.DateTimeFormat`.
 */
export interface SmscTimeZone {
  /** The setting as written: 'UTC', '+04:00', 'Asia/Dubai', … */
  readonly spec: string;
  /** Minutes east of UTC at the instant `utcMs` (milliseconds since the epoch). */
  offsetMinutes(utcMs: number): number;
}

/** 'UTC', 'GMT' or 'Z'. */
const UTC_NAMES = /^(?:utc|gmt|z)$/i;
/**
 * A fixed offset: '+04:00', '+0400', '+4', '-05:30', 'UTC+04:00', 'GMT+4'. A prefix of UTC or
 * GMT is read as people write it (GMT+4 is four hours east), unlike the POSIX-style IANA names
 * 'Etc/GMT+4' (four hours west), which go to `Intl` unchanged.
 */
const FIXED_OFFSET = /^(?:utc|gmt)?\s*([+-])(\d{1,2})(?::?(\d{2}))?$/i;

/**
 * Resolves a time zone setting: 'UTC', a fixed offset (see above, at most ±18:00), or an IANA
 * zone name ('Asia/Dubai'). Returns null for anything else.
 */
export function parseTimeZone(spec: string): SmscTimeZone | null {
  const s = spec.trim();
  if (UTC_NAMES.test(s)) return fixedZone(spec, 0);
  const m = FIXED_OFFSET.exec(s);
  if (m) {
    const hours = Number(m[2]);
    const minutes = Number(m[3] ?? '0');
    if (minutes > 59 || hours * 60 + minutes > 18 * 60) return null;
    return fixedZone(spec, (m[1] === '-' ? -1 : 1) * (hours * 60 + minutes));
  }
  return ianaZone(spec, s);
}

/** Whether `parseTimeZone` accepts the setting (for configuration checks). */
export function isValidTimeZone(spec: string): boolean {
  return parseTimeZone(spec) !== null;
}

function fixedZone(spec: string, minutes: number): SmscTimeZone {
  return { spec, offsetMinutes: () => minutes };
}

function ianaZone(spec: string, name: string): SmscTimeZone | null {
  if (name === '') return null;
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch {
    return null; // RangeError: not a zone this runtime knows
  }
  // formatToParts costs about 3 µs, and converting one receipt date asks for four to six
  // offsets: receipts that come in the same second ask for the same instants, so the answers
  // are kept (a few hundred at most; the zone's rules never change while the process runs).
  const known = new Map<number, number>();
  return {
    spec,
    offsetMinutes(utcMs: number): number {
      const hit = known.get(utcMs);
      if (hit !== undefined) return hit;
      const wall: Record<string, number> = {};
      for (const p of format.formatToParts(utcMs)) if (p.type !== 'literal') wall[p.type] = Number(p.value);
      const asUtc = utcFields(wall.year ?? 1970, wall.month ?? 1, wall.day ?? 1, wall.hour ?? 0, wall.minute ?? 0, wall.second ?? 0);
      const offset = Math.round((asUtc - Math.floor(utcMs / 1000) * 1000) / MINUTE_MS);
      if (known.size >= KNOWN_OFFSETS) known.clear();
      known.set(utcMs, offset);
      return offset;
    },
  };
}

/** Milliseconds since the epoch of a wall time read as UTC; month 1–12. Years below 100 stay as given. */
export function utcFields(year: number, month: number, day: number, hour: number, minute: number, second: number, ms = 0): number {
  const d = new Date(Date.UTC(2000, month - 1, day, hour, minute, second, ms));
  d.setUTCFullYear(year);
  return d.getTime();
}

/**
 * The instant at which the zone's clocks show `wallMs` (a wall time encoded as if it were UTC).
 * A wall time that happens twice (clocks going back) is the earlier instant; one that never
 * happens (clocks going forward) is moved forward by the gap, as Temporal's 'compatible' does.
 */
export function wallTimeToUtcMs(zone: SmscTimeZone, wallMs: number): number {
  const before = zone.offsetMinutes(wallMs - DAY_MS);
  const after = zone.offsetMinutes(wallMs + DAY_MS);
  let best: number | null = null;
  for (const offset of new Set([before, after, zone.offsetMinutes(wallMs)])) {
    const utc = wallMs - offset * MINUTE_MS;
    if (zone.offsetMinutes(utc) === offset && (best === null || utc < best)) best = utc;
  }
  return best ?? wallMs - before * MINUTE_MS;
}
