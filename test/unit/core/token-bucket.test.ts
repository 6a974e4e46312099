import { describe, expect, it } from 'vitest';
import { TokenBucket } from '../../../src/core/token-bucket.js';

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

describe('TokenBucket after a pause', () => {
  it('saves no tokens while held, so a throttled bind does not burst when the pause ends', () => {
    const b = new TokenBucket(10, 20, 0);
    b.holdUntil(1000);
    expect(b.available(1000)).toBe(0);
    expect(b.take(1, 1000)).toBe(100);
    expect(b.take(1, 1100)).toBe(0);
  });
});

describe('TokenBucket.setLimits', () => {
  it('keeps the tokens earned, down to the new burst, and refills at the new rate', () => {
    const b = new TokenBucket(10, 20, 0);
    for (let i = 0; i < 15; i++) expect(b.take(1, 0)).toBe(0);
    b.setLimits(2, 3, 0); // 5 saved, cut to the new burst
    expect(b.available(0)).toBe(3);
    for (let i = 0; i < 3; i++) expect(b.take(1, 0)).toBe(0);
    expect(b.take(1, 0)).toBe(500);
    expect(b.take(1, 500)).toBe(0);
  });

  it('hands out no fresh burst when the limits grow', () => {
    const b = new TokenBucket(1, 1, 0);
    expect(b.take(1, 0)).toBe(0);
    b.setLimits(1, 100, 0);
    expect(b.available(0)).toBe(0);
    expect(b.available(10_000)).toBe(10);
  });
});
