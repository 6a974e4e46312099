import { describe, expect, it } from 'vitest';
import { RateTracker } from '../../../src/core/rate-tracker.js';

describe('RateTracker (1-second sliding window in 10 ms buckets)', () => {
  it('counts events in the last second and forgets older ones', () => {
    const r = new RateTracker();
    for (let t = 0; t < 500; t += 5) r.record(t); // 100 events in 0.5 s
    expect(r.current(500)).toBe(100);
    expect(r.current(999)).toBe(100);
    expect(r.current(1_240)).toBe(50); // buckets 25..124: 250–1,249 ms
    expect(r.current(1_500)).toBe(0);
    expect(r.max).toBe(100);
  });

  it('finds the busiest second even when it straddles whole seconds', () => {
    const r = new RateTracker();
    for (let t = 0; t < 3_000; t += 10) r.record(t); // 100/s steady
    for (let i = 0; i < 150; i++) r.record(3_500 + i); // burst at 3.5 s
    for (let i = 0; i < 150; i++) r.record(4_200 + i); // another 0.7 s later
    expect(r.max).toBe(300);
  });

  it('jumps long idle gaps and resets', () => {
    const r = new RateTracker();
    r.record(0, 7);
    r.record(1e9, 3);
    expect(r.current(1e9)).toBe(3);
    expect(r.max).toBe(7);
    r.reset();
    expect(r.max).toBe(0);
    r.record(5);
    expect(r.max).toBe(1);
  });
});
