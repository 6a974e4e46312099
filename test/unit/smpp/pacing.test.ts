import { describe, expect, it } from 'vitest';
import { ThrottleController } from '../../../src/smpp/throttle.js';

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
