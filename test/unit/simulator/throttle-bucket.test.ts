import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { ThrottleBucket, defaultThrottleBurst } from '../../../src/simulator/throttle-bucket.js';

describe('ThrottleBucket', () => {
  it('allows the burst at once, then one submit per 1/rate seconds', () => {
    const clock = new ManualClock();
    const bucket = new ThrottleBucket(100, 3, clock.now());
    expect([1, 2, 3, 4].map(() => bucket.tryTake(clock.now()))).toEqual([true, true, true, false]);
    clock.advance(9);
    expect(bucket.tryTake(clock.now())).toBe(false);
    clock.advance(1);
    expect(bucket.tryTake(clock.now())).toBe(true);
    expect(bucket.tryTake(clock.now())).toBe(false);
  });

  it('never saves more than the burst however long it idles', () => {
    const clock = new ManualClock();
    const bucket = new ThrottleBucket(1000, 5, clock.now());
    clock.advance(60_000);
    let taken = 0;
    while (bucket.tryTake(clock.now())) taken++;
    expect(taken).toBe(5);
  });

  it('holds the rate over a simulated second: rate + burst at most', () => {
    const clock = new ManualClock();
    const bucket = new ThrottleBucket(200, defaultThrottleBurst(200), clock.now());
    let ok = 0;
    for (let t = 0; t < 1000; t++) {
      for (let i = 0; i < 5; i++) if (bucket.tryTake(clock.now())) ok++;
      clock.advance(1);
    }
    expect(ok).toBeGreaterThanOrEqual(200);
    expect(ok).toBeLessThanOrEqual(204);
  });

  it('changes rate at runtime without refilling', () => {
    const clock = new ManualClock();
    const bucket = new ThrottleBucket(10, 1, clock.now());
    expect(bucket.tryTake(clock.now())).toBe(true);
    bucket.reconfigure(1000, 1, clock.now());
    clock.advance(1);
    expect(bucket.tryTake(clock.now())).toBe(true);
  });

  it('defaults the burst to 1/50 of the rate, at least 1', () => {
    expect(defaultThrottleBurst(1000)).toBe(20);
    expect(defaultThrottleBurst(10)).toBe(1);
    expect(defaultThrottleBurst(0)).toBe(1);
  });
});
