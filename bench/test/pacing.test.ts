/** The pacing cases' reading of the simulator's counters: settling, the rate after it, the throttled share. */
import { describe, expect, it } from 'vitest';
import { phaseFigures, secondWindows, type SmscReading } from '../src/pacing-figures.js';

/** Readings every 250 ms for `seconds`, accepting `rate(t)`/s and throttling `throttled(t)`/s at time t (ms). */
function readings(seconds: number, rate: (t: number) => number, throttled: (t: number) => number = () => 0): SmscReading[] {
  const out: SmscReading[] = [{ t: 0, received: 0, accepted: 0, throttled: 0 }];
  for (let t = 250; t <= seconds * 1000; t += 250) {
    const prev = out.at(-1)!;
    const a = rate(t) / 4;
    const th = throttled(t) / 4;
    out.push({ t, received: prev.received + a + th, accepted: prev.accepted + a, throttled: prev.throttled + th });
  }
  return out;
}

describe('secondWindows', () => {
  it('ends a window at each reading a second or more into the phase, rated by the time between its readings', () => {
    const r: SmscReading[] = [0, 250, 500, 1100, 1250, 2300].map((t) => ({ t, received: t, accepted: t / 2, throttled: 0 }));
    expect(secondWindows(r, { from: 0, to: 3000, limit: 500 })).toEqual([
      { from: 0, to: 1100, perSecond: 500 },
      { from: 250, to: 1250, perSecond: 500 },
      { from: 1250, to: 2300, perSecond: 500 },
    ]);
  });

  it('keeps to the readings of the phase', () => {
    const r = readings(30, () => 500);
    const w = secondWindows(r, { from: 15_000, to: 30_000, limit: 500 });
    expect(w[0]).toMatchObject({ from: 15_000, to: 16_000 });
    expect(w.at(-1)).toMatchObject({ from: 29_000, to: 30_000 });
  });
});

describe('phaseFigures', () => {
  it('settles where every later 1-s window holds 95 % of the limit, and reads the rate and throttled share from 10 s on', () => {
    // 200/s for 3 s, then 490/s with 5/s throttled.
    const r = readings(30, (t) => (t <= 3000 ? 200 : 490), (t) => (t <= 3000 ? 0 : 5));
    const f = phaseFigures(r, { from: 0, to: 30_000, limit: 500 });
    expect(f.settleSeconds).toBe(3);
    expect(f.acceptedPerSecond).toBe(490);
    expect(f.achievedPercent).toBe(98);
    expect(f.throttledPercent).toBe(1.01);
    expect(f.windowMinPercent).toBe(98);
    expect(f.windowMaxPercent).toBe(98);
  });

  it('counts a dip below 95 % after the start as not yet settled', () => {
    const r = readings(30, (t) => (t > 20_000 && t <= 21_000 ? 300 : 500));
    expect(phaseFigures(r, { from: 0, to: 30_000, limit: 500 }).settleSeconds).toBe(21);
  });

  it('says null when the phase ends below 95 % or is too short for the figures after settling', () => {
    const low = phaseFigures(readings(30, () => 400), { from: 0, to: 30_000, limit: 500 });
    expect(low.settleSeconds).toBeNull();
    expect(low.achievedPercent).toBe(80);
    const short = phaseFigures(readings(5, () => 500), { from: 0, to: 5000, limit: 500 });
    expect(short.settleSeconds).toBe(0);
    expect(short.acceptedPerSecond).toBeNull();
    expect(short.throttledPercent).toBeNull();
  });

  it('times a later phase from its own start', () => {
    const r = readings(45, (t) => (t <= 15_000 ? 800 : t <= 17_500 ? 150 : 291));
    const f = phaseFigures(r, { from: 15_000, to: 30_000, limit: 300 });
    expect(f.settleSeconds).toBe(2.5);
    expect(f.achievedPercent).toBe(97);
  });
});
