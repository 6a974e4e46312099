import { describe, expect, it } from 'vitest';
import { parseScheduleTime } from '../../../src/api/schedule-time.js';

describe('parseScheduleTime', () => {
  it('reads a local time in an offset, a zone name, or UTC', () => {
    expect(parseScheduleTime('2026-03-01 12:00', '+04:00')).toEqual({ ok: true, at: Date.UTC(2026, 2, 1, 8) });
    expect(parseScheduleTime('2026-03-01T12:00:30.5', '-05:30')).toEqual({ ok: true, at: Date.UTC(2026, 2, 1, 17, 30, 30, 500) });
    expect(parseScheduleTime('2026-07-01 12:00', 'Europe/Berlin')).toEqual({ ok: true, at: Date.UTC(2026, 6, 1, 10) });
    expect(parseScheduleTime('2026-01-01 00:00', undefined)).toEqual({ ok: true, at: Date.UTC(2026, 0, 1) });
  });

  it('refuses what is not a local date-time, or a date that does not exist', () => {
    for (const t of ['2026-03-01', '12:00', '2026-3-1 12:00', '2026-02-29 10:00', '2026-01-01 24:00', '2026-01-01T10:00Z', '1767225600000']) {
      expect(parseScheduleTime(t, '+00:00'), t).toMatchObject({ ok: false, field: 'time' });
    }
    expect(parseScheduleTime('2026-01-01 10:00', '+25:00')).toMatchObject({ ok: false, field: 'gmt' });
  });
});
