/** An IANA zone keeps the offsets it has computed: what it answers must not depend on what it was asked before. */
import { describe, expect, it } from 'vitest';
import { parseTimeZone, wallTimeToUtcMs } from '../../../src/core/time-zone.js';

const HOUR_MS = 3_600_000;

describe('an IANA time zone', () => {
  it('answers the same offsets asked again, across a DST change, and past the number it keeps', () => {
    const kept = parseTimeZone('Europe/London')!;
    // Around the end of summer time, 2026-10-25 01:00 UTC, in 7-minute steps: 1,000 instants.
    const start = Date.UTC(2026, 9, 24, 0, 0, 0) - 24 * HOUR_MS;
    const instants = Array.from({ length: 1_000 }, (_, i) => start + i * 7 * 60_000);
    const first = instants.map((t) => kept.offsetMinutes(t));
    const again = instants.map((t) => kept.offsetMinutes(t));
    const fresh = instants.map((t) => parseTimeZone('Europe/London')!.offsetMinutes(t));
    expect(again).toEqual(first);
    expect(first).toEqual(fresh);
    expect(new Set(first)).toEqual(new Set([60, 0]));
  });

  it('converts a wall time the clocks show twice to its earlier instant, asked once or many times', () => {
    const zone = parseTimeZone('Europe/London')!;
    // 01:30 on 2026-10-25 happens at 00:30 UTC (BST) and at 01:30 UTC (GMT).
    const wall = Date.UTC(2026, 9, 25, 1, 30);
    for (let i = 0; i < 3; i++) expect(wallTimeToUtcMs(zone, wall)).toBe(Date.UTC(2026, 9, 25, 0, 30));
  });
});
