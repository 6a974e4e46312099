import { describe, expect, it } from 'vitest';
import { RateMeter } from '../../../src/smpp/rate-meter.js';

describe('RateMeter', () => {
  it('counts the last second and keeps the highest 1-second window', () => {
    const m = new RateMeter();
    for (let t = 0; t < 3000; t++) m.record(t); // 1,000 per second
    for (let i = 0; i < 50; i++) m.record(3000); // a burst of 50
    // The second up to t=3000 is the 10 ms slots from 2010: 990 paced events plus the burst.
    expect(m.lastSecond(3000)).toBe(1040);
    expect(m.maxPerSecond).toBe(1040);
    expect(m.lastSecond(5000)).toBe(0);
    expect(m.maxPerSecond).toBe(1040);
  });
});
