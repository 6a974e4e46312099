import { describe, expect, it } from 'vitest';
import { nextRunAfter, repeatEvery, runAt, type Recurrence } from '../../../src/core/recurrence.js';
import { parseTimeZone } from '../../../src/core/time-zone.js';

const zone = (spec: string) => parseTimeZone(spec)!;
const iso = (ms: number) => new Date(ms).toISOString();
const at = (text: string) => Date.parse(text);
const HOUR = 3_600_000;

/** The first `n` runs of a series starting at `first`, as ISO instants. */
function runs(every: Recurrence['every'], spec: string, first: string, n: number): string[] {
  return Array.from({ length: n }, (_, k) => iso(runAt(every, zone(spec), at(first), k)));
}

describe('runAt keeps the wall time of the first run in its zone', () => {
  it('Europe/London, clocks forward on 29 March 2026: 09:00 stays 09:00, 23 hours apart', () => {
    expect(runs('DAILY', 'Europe/London', '2026-03-28T09:00:00Z', 3)).toEqual([
      '2026-03-28T09:00:00.000Z', '2026-03-29T08:00:00.000Z', '2026-03-30T08:00:00.000Z',
    ]);
  });

  it('Europe/London, clocks back on 25 October 2026: 09:00 stays 09:00, 25 hours apart', () => {
    const [a, b] = runs('DAILY', 'Europe/London', '2026-10-24T08:00:00Z', 2).map(at);
    expect(iso(b!)).toBe('2026-10-25T09:00:00.000Z');
    expect(b! - a!).toBe(25 * HOUR);
  });

  it('America/New_York, clocks forward on 8 March 2026: 02:30 does not exist that day and moves to 03:30', () => {
    // 02:30 EST is 07:30Z; on the 8th 02:30 is skipped (03:30 EDT, 07:30Z); on the 9th 02:30 EDT is 06:30Z.
    expect(runs('DAILY', 'America/New_York', '2026-03-07T07:30:00Z', 3)).toEqual([
      '2026-03-07T07:30:00.000Z', '2026-03-08T07:30:00.000Z', '2026-03-09T06:30:00.000Z',
    ]);
  });

  it('America/New_York, clocks back on 1 November 2026: 01:30 happens twice and the earlier one runs', () => {
    expect(runs('DAILY', 'America/New_York', '2026-10-31T05:30:00Z', 3)).toEqual([
      '2026-10-31T05:30:00.000Z', '2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z',
    ]);
  });

  it('WEEKLY across the London change is 7 days less an hour', () => {
    expect(runs('WEEKLY', 'Europe/London', '2026-03-25T09:00:00Z', 2)).toEqual(['2026-03-25T09:00:00.000Z', '2026-04-01T08:00:00.000Z']);
  });

  it('a fixed offset has no changes: exactly a day apart', () => {
    const [a, b] = runs('DAILY', '+04:00', '2026-03-28T05:00:00Z', 2).map(at);
    expect(b! - a!).toBe(24 * HOUR);
  });

  it('MONTHLY on the 31st runs on the last day of shorter months and returns to the 31st', () => {
    expect(runs('MONTHLY', 'UTC', '2026-01-31T10:00:00Z', 5)).toEqual([
      '2026-01-31T10:00:00.000Z', '2026-02-28T10:00:00.000Z', '2026-03-31T10:00:00.000Z', '2026-04-30T10:00:00.000Z', '2026-05-31T10:00:00.000Z',
    ]);
  });

  it('MONTHLY on the 29th meets 29 February in a leap year and 28 February otherwise', () => {
    expect(runs('MONTHLY', 'UTC', '2027-12-29T00:00:00Z', 3)).toEqual(['2027-12-29T00:00:00.000Z', '2028-01-29T00:00:00.000Z', '2028-02-29T00:00:00.000Z']);
    expect(runs('MONTHLY', 'UTC', '2026-01-29T00:00:00Z', 3)[1]).toBe('2026-02-28T00:00:00.000Z');
  });

  it('MONTHLY keeps the local day and hour across a change: 31 March 09:00 London is 08:00Z, 31 October 09:00 is 09:00Z', () => {
    const list = runs('MONTHLY', 'Europe/London', '2026-01-31T09:00:00Z', 10);
    expect(list[2]).toBe('2026-03-31T08:00:00.000Z');
    expect(list[9]).toBe('2026-10-31T09:00:00.000Z');
  });
});

describe('nextRunAfter', () => {
  const daily: Recurrence = { every: 'DAILY', count: null, until: null, zone: 'Europe/London' };
  const first = at('2026-03-28T09:00:00Z');

  it('is the next run after the one just made', () => {
    expect(iso(nextRunAfter(daily, first, 1, first)!)).toBe('2026-03-29T08:00:00.000Z');
  });

  it('ends when the runs made reach count', () => {
    const three = { ...daily, count: 3 };
    expect(nextRunAfter(three, first, 2, first + 24 * HOUR)).not.toBeNull();
    expect(nextRunAfter(three, first, 3, first + 48 * HOUR)).toBeNull();
    expect(nextRunAfter({ ...daily, count: 1 }, first, 1, first)).toBeNull();
  });

  it('ends when the next run would be after until; a run at until itself is made', () => {
    const until = at('2026-03-30T08:00:00Z');
    expect(iso(nextRunAfter({ ...daily, until }, first, 2, at('2026-03-29T08:00:00Z'))!)).toBe('2026-03-30T08:00:00.000Z');
    expect(nextRunAfter({ ...daily, until: until - 1 }, first, 2, at('2026-03-29T08:00:00Z'))).toBeNull();
  });

  it('passes over the runs missed while nothing ran them, and a run made early (send-now) is not made again', () => {
    // Down from the 28th to the 31st at noon: the next is the 1st of April.
    expect(iso(nextRunAfter(daily, first, 1, at('2026-03-31T12:00:00Z'))!)).toBe('2026-04-01T08:00:00.000Z');
    // The run of the 30th sent at 07:00Z, an hour early: the next is the 31st, not the 30th again.
    expect(iso(nextRunAfter(daily, first, 3, at('2026-03-30T08:00:00Z'))!)).toBe('2026-03-31T08:00:00.000Z');
  });

  it('finds a run years on without walking every month before it', () => {
    const monthly: Recurrence = { every: 'MONTHLY', count: null, until: null, zone: 'UTC' };
    expect(iso(nextRunAfter(monthly, at('2026-01-31T10:00:00Z'), 1, at('2036-02-15T00:00:00Z'))!)).toBe('2036-02-29T10:00:00.000Z');
  });
});

describe('repeatEvery', () => {
  it('takes the three words in any case, and nothing else', () => {
    expect(['daily', ' Weekly ', 'MONTHLY'].map(repeatEvery)).toEqual(['DAILY', 'WEEKLY', 'MONTHLY']);
    expect(['', 'yearly', 'DAY'].map(repeatEvery)).toEqual([null, null, null]);
  });
});
