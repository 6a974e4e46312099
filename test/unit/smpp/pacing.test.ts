import { describe, expect, it } from 'vitest';
import { ThrottleController } from '../../../src/smpp/throttle.js';
import { TokenBucket } from '../../../src/smpp/token-bucket.js';

/** Sends as fast as the bucket allows for `ms`, returning the send times. */
function drive(bucket: TokenBucket, ms: number, stepMs = 0.25): number[] {
  const sent: number[] = [];
  for (let t = 0; t <= ms; t += stepMs) while (bucket.take(1, t) === 0) sent.push(t);
  return sent;
}

function maxInWindow(times: number[], windowMs: number): number {
  let max = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= windowMs) j++;
    max = Math.max(max, i - j + 1);
  }
  return max;
}

describe('TokenBucket', () => {
  it('holds a bind to its rate over 10 s and no 1-s window above rate + burst', () => {
    const sent = drive(new TokenBucket(1000, 20, 0), 10_000);
    expect(Math.abs(sent.length - 10_020) / 10_000).toBeLessThan(0.01);
    expect(maxInWindow(sent, 1000)).toBeLessThanOrEqual(1020);
  });

  it('says how long to wait for the next token', () => {
    const b = new TokenBucket(1000, 1, 0);
    expect(b.take(1, 0)).toBe(0);
    expect(b.take(1, 0)).toBe(1);
    expect(b.take(1, 0.5)).toBe(1);
    expect(b.take(1, 1)).toBe(0);
  });

  it('never saves more than burst while idle', () => {
    const b = new TokenBucket(1000, 5, 0);
    expect(b.available(60_000)).toBe(5);
  });

  it('is unpaced at rate 0', () => {
    const b = new TokenBucket(0, 1, 0);
    for (let i = 0; i < 10_000; i++) expect(b.take(1, 0)).toBe(0);
  });
});

describe('ThrottleController (AIMD)', () => {
  const settings = { maxRate: 1000, pauseMs: 1000, minRate: 10, recoverPerSecond: 100 };

  it('halves the rate once per episode, pauses, then climbs back linearly', () => {
    const t = new ThrottleController(settings, 0);
    expect(t.onThrottled(0)).toBe(true);
    // The other 99 answers of the same burst arrive within the pause: one halving only.
    for (let i = 0; i < 99; i++) expect(t.onThrottled(5)).toBe(false);
    expect(t.rate(10)).toBe(500);
    expect(t.pauseLeft(10)).toBe(990);
    expect(t.rate(1000)).toBe(500);
    expect(t.rate(2000)).toBeCloseTo(600);
    expect(t.rate(6000)).toBe(1000);
    expect(t.rate(60_000)).toBe(1000);
    expect(t.episodes).toBe(1);
  });

  it('never goes below the floor nor above the configured rate', () => {
    const t = new ThrottleController(settings, 0);
    for (let i = 0; i < 20; i++) t.onThrottled(i * 1000);
    expect(t.rate(20_000)).toBe(10);
    expect(t.isSlowed(20_000)).toBe(true);
  });

  it('only pauses an unpaced bind', () => {
    const t = new ThrottleController({ ...settings, maxRate: 0 }, 0);
    t.onThrottled(0);
    expect(t.rate(1)).toBe(0);
    expect(t.pauseLeft(1)).toBe(999);
  });
});

describe('TokenBucket after a pause', () => {
  it('saves no tokens while held, so a throttled bind does not burst when the pause ends', () => {
    const b = new TokenBucket(10, 20, 0);
    b.holdUntil(1000);
    expect(b.available(1000)).toBe(0);
    expect(b.take(1, 1000)).toBe(100);
    expect(b.take(1, 1100)).toBe(0);
  });
});
