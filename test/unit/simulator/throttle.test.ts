import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { TokenBucket } from '../../../src/core/token-bucket.js';
import { defaultThrottleBurst } from '../../../src/simulator/behaviour.js';

/** A submit_sm the simulator's throttle lets through. */
const tryTake = (bucket: TokenBucket, now: number): boolean => bucket.take(1, now) === 0;

describe("the simulator's throttle", () => {
  it('allows the burst at once, then one submit per 1/rate seconds', () => {
    const clock = new ManualClock();
    const bucket = new TokenBucket(100, 3, clock.now());
    expect([1, 2, 3, 4].map(() => tryTake(bucket, clock.now()))).toEqual([true, true, true, false]);
    clock.advance(9);
    expect(tryTake(bucket, clock.now())).toBe(false);
    clock.advance(1);
    expect(tryTake(bucket, clock.now())).toBe(true);
    expect(tryTake(bucket, clock.now())).toBe(false);
  });

  it('never saves more than the burst however long it idles', () => {
    const clock = new ManualClock();
    const bucket = new TokenBucket(1000, 5, clock.now());
    clock.advance(60_000);
    let taken = 0;
    while (tryTake(bucket, clock.now())) taken++;
    expect(taken).toBe(5);
  });

  it('holds the rate over a simulated second: rate + burst at most', () => {
    const clock = new ManualClock();
    const bucket = new TokenBucket(200, defaultThrottleBurst(200), clock.now());
    let ok = 0;
    for (let t = 0; t < 1000; t++) {
      for (let i = 0; i < 5; i++) if (tryTake(bucket, clock.now())) ok++;
      clock.advance(1);
    }
    expect(ok).toBeGreaterThanOrEqual(200);
    expect(ok).toBeLessThanOrEqual(204);
  });

  it('changes rate at runtime without refilling', () => {
    const clock = new ManualClock();
    const bucket = new TokenBucket(10, 1, clock.now());
    expect(tryTake(bucket, clock.now())).toBe(true);
    bucket.setLimits(1000, 1, clock.now());
    clock.advance(1);
    expect(tryTake(bucket, clock.now())).toBe(true);
  });

  it('defaults the burst to 1/50 of the rate, at least 1', () => {
    expect(defaultThrottleBurst(1000)).toBe(20);
    expect(defaultThrottleBurst(10)).toBe(1);
    expect(defaultThrottleBurst(0)).toBe(1);
  });
});
