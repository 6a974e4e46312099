import { describe, expect, it } from 'vitest';
import { ClientRateLimiter, retryAfterSeconds } from '../../../src/api/client-rate-limiter.js';
import { ManualClock } from '../../../src/core/clock.js';

/** How many of `n` sends in a row `client` is let through now. */
function burstOf(limiter: ClientRateLimiter, client: string, n = 1000): number {
  let taken = 0;
  for (let i = 0; i < n; i++) if (limiter.take(client) === 0) taken++;
  return taken;
}

describe('ClientRateLimiter', () => {
  it('lets a client send its burst at once, then at its rate, and says how long to wait', () => {
    const clock = new ManualClock();
    const limiter = new ClientRateLimiter([{ name: 'shop', rateLimit: { perSecond: 2, burst: 3 } }], clock);
    expect(burstOf(limiter, 'shop')).toBe(3);
    expect(limiter.take('shop')).toBe(500);
    clock.advance(499);
    expect(limiter.take('shop')).toBeGreaterThan(0); // a millisecond or two, by floating point
    clock.advance(1);
    expect(limiter.take('shop')).toBe(0);
    clock.advance(10_000);
    expect(burstOf(limiter, 'shop')).toBe(3); // never more than the burst saved
  });

  it('keeps each client to its own bucket; a client without a limit is never refused', () => {
    const clock = new ManualClock();
    const limiter = new ClientRateLimiter([
      { name: 'flood', rateLimit: { perSecond: 1, burst: 1 } },
      { name: 'quiet', rateLimit: { perSecond: 1, burst: 5 } },
      { name: 'free' },
    ], clock);
    expect(burstOf(limiter, 'flood')).toBe(1);
    expect(burstOf(limiter, 'quiet')).toBe(5);
    expect(burstOf(limiter, 'free', 100_000)).toBe(100_000);
    expect(burstOf(limiter, 'unknown', 10)).toBe(10);
    expect(limiter.limitOf('free')).toBeUndefined();
    expect(limiter.limitOf('quiet')).toEqual({ perSecond: 1, burst: 5 });
  });

  it('a reload applies the new limits and keeps the bucket: no fresh burst for a client that stays limited', () => {
    const clock = new ManualClock();
    const limiter = new ClientRateLimiter([{ name: 'shop', rateLimit: { perSecond: 10, burst: 10 } }, { name: 'crm' }], clock);
    expect(burstOf(limiter, 'shop')).toBe(10);
    limiter.replace([{ name: 'shop', rateLimit: { perSecond: 1, burst: 10 } }, { name: 'crm', rateLimit: { perSecond: 1, burst: 2 } }]);
    expect(limiter.take('shop')).toBe(1000); // still empty, now refilled at 1/s
    expect(burstOf(limiter, 'crm')).toBe(2); // newly limited: a full bucket
    clock.advance(1000);
    expect(burstOf(limiter, 'shop')).toBe(1);
  });

  it('a client whose limit is removed, or who leaves, is unlimited; coming back, it starts full', () => {
    const clock = new ManualClock();
    const limiter = new ClientRateLimiter([{ name: 'shop', rateLimit: { perSecond: 1, burst: 1 } }], clock);
    expect(burstOf(limiter, 'shop')).toBe(1);
    limiter.replace([{ name: 'shop' }]);
    expect(burstOf(limiter, 'shop', 50)).toBe(50);
    limiter.replace([{ name: 'shop', rateLimit: { perSecond: 1, burst: 4 } }]);
    expect(burstOf(limiter, 'shop')).toBe(4);
  });
});

describe('retryAfterSeconds', () => {
  it('is whole seconds, rounded up, at least 1', () => {
    expect(retryAfterSeconds(1)).toBe(1);
    expect(retryAfterSeconds(1000)).toBe(1);
    expect(retryAfterSeconds(1001)).toBe(2);
    expect(retryAfterSeconds(4000)).toBe(4);
    expect(retryAfterSeconds(0)).toBe(1);
  });
});
