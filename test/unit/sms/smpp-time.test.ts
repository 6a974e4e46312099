import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSmppdError } from '../../../src/core/errors.js';
import { isValidTimeZone, parseTimeZone, wallTimeToUtcMs } from '../../../src/core/time-zone.js';
import {
  formatIsoUtc,
  MAX_VALIDITY_HOURS,
  parseSmppTime,
  receiptDateToIso,
  smppAbsoluteTimeToIso,
  validityPeriod,
} from '../../../src/sms/smpp-time.js';

describe('parseTimeZone', () => {
  it('reads UTC, fixed offsets in several spellings, and IANA names', () => {
    const at = Date.UTC(2026, 0, 15);
    const cases: [string, number][] = [
      ['UTC', 0], ['utc', 0], ['Z', 0], ['GMT', 0], ['+04:00', 240], ['+0400', 240], ['+4', 240], ['-05:30', -330],
      ['UTC+04:00', 240], ['GMT+4', 240], ['UTC-3', -180], ['Asia/Dubai', 240], ['Asia/Kolkata', 330], ['Etc/GMT+4', -240],
    ];
    for (const [spec, minutes] of cases) expect(parseTimeZone(spec)?.offsetMinutes(at), spec).toBe(minutes);
  });

  it('follows daylight saving time in IANA zones', () => {
    const berlin = parseTimeZone('Europe/Berlin')!;
    expect(berlin.offsetMinutes(Date.UTC(2026, 0, 15))).toBe(60);
    expect(berlin.offsetMinutes(Date.UTC(2026, 6, 15))).toBe(120);
  });

  it('refuses what is neither an offset nor a zone', () => {
    for (const spec of ['', 'Mars/Olympus', '+25:00', '+04:75', 'four', '04:00']) expect(isValidTimeZone(spec), spec).toBe(false);
  });
});

describe('receiptDateToIso (SMPP v3.4 Appendix B dates)', () => {
  it('reads 10, 12 and 14 digits', () => {
    expect(receiptDateToIso('2611221231', 'UTC')).toBe('2026-11-22T12:31:00Z');
    expect(receiptDateToIso('261122123107', 'UTC')).toBe('2026-11-22T12:31:07Z');
    expect(receiptDateToIso('20261122123107', 'UTC')).toBe('2026-11-22T12:31:07Z');
  });

  it('converts from the SMSC zone, across midnight and the year', () => {
    expect(receiptDateToIso('2701010130', '+04:00')).toBe('2026-12-31T21:30:00Z');
    expect(receiptDateToIso('2612312330', '-05:00')).toBe('2027-01-01T04:30:00Z');
    expect(receiptDateToIso('2611221231', 'Asia/Kolkata')).toBe('2026-11-22T07:01:00Z');
  });

  it('takes the earlier instant for a repeated wall time and moves a skipped one forward', () => {
    // Europe/Berlin 2026: clocks go forward at 02:00 on 29 March and back at 03:00 on 25 October.
    expect(receiptDateToIso('2603290230', 'Europe/Berlin')).toBe('2026-03-29T01:30:00Z'); // 03:30 CEST
    expect(receiptDateToIso('2610250230', 'Europe/Berlin')).toBe('2026-10-25T00:30:00Z'); // first 02:30, CEST
    expect(receiptDateToIso('2610250330', 'Europe/Berlin')).toBe('2026-10-25T02:30:00Z');
  });

  it('returns null for wrong lengths, non-digits, impossible dates and unknown zones', () => {
    for (const v of ['', '26112212', '26112212310', '2611221231070', 'x611221231', '2613221231', '2602291200', '2611222431', '2611221260', '00000000000000']) {
      expect(receiptDateToIso(v, 'UTC'), v).toBeNull();
    }
    expect(receiptDateToIso('2402291200', 'UTC')).toBe('2024-02-29T12:00:00Z');
    expect(receiptDateToIso('2611221231', 'Nowhere/Town')).toBeNull();
  });

  it('agrees with the fixed offset for every valid date (property)', () => {
    // A day inside the range on both ends: the SMSC's local date must stay within 2000–2099,
    // the only years a two-digit receipt date can name.
    const date = fc.date({ min: new Date(Date.UTC(2000, 0, 2)), max: new Date(Date.UTC(2099, 11, 30)), noInvalidDate: true });
    fc.assert(
      fc.property(date, fc.integer({ min: -12 * 4, max: 14 * 4 }), (d, quarters) => {
        const utc = Math.floor(d.getTime() / 1000) * 1000;
        const local = new Date(utc + quarters * 15 * 60_000);
        const p = (n: number) => String(n).padStart(2, '0');
        const digits = `${local.getUTCFullYear()}${p(local.getUTCMonth() + 1)}${p(local.getUTCDate())}${p(local.getUTCHours())}${p(local.getUTCMinutes())}${p(local.getUTCSeconds())}`;
        const sign = quarters < 0 ? '-' : '+';
        const offset = `${sign}${p(Math.floor(Math.abs(quarters) / 4))}:${p((Math.abs(quarters) % 4) * 15)}`;
        expect(receiptDateToIso(digits, offset)).toBe(formatIsoUtc(utc));
        expect(receiptDateToIso(digits.slice(2), offset)).toBe(formatIsoUtc(utc));
      }),
    );
  });
});

describe('wallTimeToUtcMs', () => {
  it('is the inverse of the zone offset outside transitions', () => {
    const ny = parseTimeZone('America/New_York')!;
    expect(wallTimeToUtcMs(ny, Date.UTC(2026, 6, 1, 12))).toBe(Date.UTC(2026, 6, 1, 16));
    expect(wallTimeToUtcMs(ny, Date.UTC(2026, 0, 1, 12))).toBe(Date.UTC(2026, 0, 1, 17));
  });
});

describe('SMPP v3.4 §7.1.1 time strings', () => {
  it('reads absolute times with tenths and quarter-hour offsets', () => {
    expect(smppAbsoluteTimeToIso('261122123107000+')).toBe('2026-11-22T12:31:07Z');
    expect(smppAbsoluteTimeToIso('261122123107516+')).toBe('2026-11-22T08:31:07.500Z'); // 16 quarters = +04:00
    expect(smppAbsoluteTimeToIso('261122123107022-')).toBe('2026-11-22T18:01:07Z'); // 22 quarters = -05:30
  });

  it('reads relative times as a period', () => {
    expect(parseSmppTime('000002030000000R')).toEqual({ kind: 'relative', years: 0, months: 0, days: 2, hours: 3, minutes: 0, seconds: 0 });
    expect(smppAbsoluteTimeToIso('000002030000000R')).toBeNull();
  });

  it('refuses empty, short, and out-of-range strings', () => {
    for (const v of ['', '2611221231070', '261122123107049+', '261322123107000+', '261122123107000X', '26112212310700+']) {
      expect(parseSmppTime(v), v).toBeNull();
    }
  });
});

describe('validityPeriod (SMPP v3.4 §5.2.15, relative §7.1.1.2)', () => {
  it('writes hours as a relative time, days past 23 hours', () => {
    expect(validityPeriod(6)).toBe('000000060000000R');
    expect(validityPeriod(24)).toBe('000001000000000R');
    expect(validityPeriod(49)).toBe('000002010000000R');
    expect(validityPeriod(MAX_VALIDITY_HOURS)).toBe('000099230000000R');
  });

  it('round-trips through parseSmppTime (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: MAX_VALIDITY_HOURS }), (h) => {
        const t = parseSmppTime(validityPeriod(h));
        expect(t?.kind).toBe('relative');
        if (t?.kind === 'relative') expect(t.days * 24 + t.hours).toBe(h);
      }),
    );
  });

  it('throws INTERNAL for hours the ingress should have refused', () => {
    for (const h of [0, -1, 1.5, MAX_VALIDITY_HOURS + 1, Number.NaN]) {
      expect(() => validityPeriod(h)).toThrow();
      try {
        validityPeriod(h);
      } catch (e) {
        expect(isSmppdError(e, 'INTERNAL')).toBe(true);
      }
    }
  });
});
