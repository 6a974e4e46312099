import { describe, expect, it } from 'vitest';
import { TokenBucket } from '../../../src/core/token-bucket.js';
import { Pacer } from '../../../src/smpp/pacer.js';
import { RateController, type RateControlSettings } from '../../../src/smpp/rate-controller.js';

const SETTINGS: RateControlSettings = { maxRate: 1000, minRate: 10, pauseMs: 0, backoff: 0.03, probe: 0.01 };

/** The SMSC's limit over time: [from ms, submit_sm/s]. */
type Schedule = Array<[number, number]>;

interface Second {
  accepted: number;
  throttled: number;
}

/**
 * A sender with endless work paced by a Pacer (the bind's: a RateController and a token bucket, waking
 * for several tokens at once) against a model SMSC (a token bucket of `limit`/s that saves up
 * `smscBurstMs` of it and answers ESME_RTHROTTLED past it), in 1 ms steps with a 2 ms round trip and
 * a window of 100. With `stalls`, now and then (every 0.5–2 s) nothing runs for 20–80 ms and the
 * backlog comes at once, as on a loaded host. Returns what the SMSC accepted and throttled each second.
 */
function run(schedule: Schedule, seconds: number, settings: RateControlSettings = SETTINGS, burst = 20, stalls = false, smscBurstMs = 20): Second[] {
  let seed = 7;
  const random = (): number => ((seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647);
  let stallAt = 500;
  const pacer = new Pacer(settings, burst, 0, () => {});
  let wakeAt = 0;
  const limitAt = (t: number): number => schedule.filter(([from]) => from <= t).at(-1)![1];
  let smscVersion = limitAt(0);
  const smscBurst = (limit: number): number => Math.max(1, Math.floor((limit * smscBurstMs) / 1000));
  const smsc = new TokenBucket(smscVersion, smscBurst(smscVersion), 0);
  const answers = new Map<number, boolean[]>();
  let outstanding = 0;
  const out: Second[] = Array.from({ length: seconds }, () => ({ accepted: 0, throttled: 0 }));
  for (let t = 0; t < seconds * 1000; t++) {
    if (stalls && t >= stallAt) {
      const end = t + 20 + Math.floor(random() * 60);
      for (; t < end; t++) {
        const late = answers.get(t);
        if (late) answers.set(end, [...(answers.get(end) ?? []), ...late]);
        answers.delete(t);
      }
      stallAt = t + 500 + Math.floor(random() * 1500);
    }
    const limit = limitAt(t);
    if (limit !== smscVersion) {
      smscVersion = limit;
      smsc.setLimits(limit, smscBurst(limit), t);
    }
    let freed = false;
    for (const accepted of answers.get(t) ?? []) {
      outstanding--;
      freed = true;
      if (accepted) pacer.onAccepted(t);
      else pacer.onThrottled(t);
    }
    answers.delete(t);
    // The bind tries when its timer is due, or when an answer frees a slot of a full window.
    if (t < wakeAt && !(freed && outstanding === 99)) continue;
    while (outstanding < 100) {
      const wait = pacer.wait(t);
      if (wait > 0) {
        wakeAt = t + wait;
        break;
      }
      pacer.take(t);
      outstanding++;
      const accepted = smsc.take(1, t) === 0;
      const s = out[Math.floor(t / 1000)]!;
      if (accepted) s.accepted++;
      else s.throttled++;
      const at = t + 2;
      answers.set(at, [...(answers.get(at) ?? []), accepted]);
    }
  }
  return out;
}

function share(seconds: Second[], from: number, to: number, limit: number): { achieved: number; throttled: number } {
  const slice = seconds.slice(from, to);
  const accepted = slice.reduce((n, s) => n + s.accepted, 0);
  const throttled = slice.reduce((n, s) => n + s.throttled, 0);
  return { achieved: accepted / (limit * slice.length), throttled: throttled / (accepted + throttled) };
}

describe('RateController against a model SMSC', () => {
  it('settles at ≥ 95 % of a per-bind limit below the configured rate within 10 s, ≤ 1 % throttled after', () => {
    const s = run([[0, 500]], 60);
    const after = share(s, 10, 60, 500);
    expect(after.achieved).toBeGreaterThanOrEqual(0.95);
    expect(after.achieved).toBeLessThanOrEqual(1.01);
    expect(after.throttled).toBeLessThanOrEqual(0.01);
  });

  it('follows a limit that drops mid-run and finds it again when it comes back', () => {
    const s = run([[0, 800], [20_000, 300], [40_000, 800]], 70);
    expect(share(s, 10, 20, 800).achieved).toBeGreaterThanOrEqual(0.95);
    const low = share(s, 30, 40, 300);
    expect(low.achieved).toBeGreaterThanOrEqual(0.95);
    expect(low.throttled).toBeLessThanOrEqual(0.01);
    const back = share(s, 50, 70, 800);
    expect(back.achieved).toBeGreaterThanOrEqual(0.95);
    expect(back.throttled).toBeLessThanOrEqual(0.01);
  });

  it('holds ≥ 95 % of the limit with ≤ 1 % throttled on a host that stalls now and then', () => {
    for (const [limit, max] of [[500, 1000], [1000, 0], [300, 1000]] as const) {
      const s = run([[0, limit]], 60, { ...SETTINGS, maxRate: max }, 20, true);
      const after = share(s, 10, 60, limit);
      expect(after.achieved, `limit ${limit}`).toBeGreaterThanOrEqual(0.95);
      expect(after.throttled, `limit ${limit}`).toBeLessThanOrEqual(0.01);
    }
  });

  it('holds ≥ 95 % with ≤ 1 % throttled against an SMSC that saves up 100 ms, which lets a probe overshoot longer', () => {
    for (const stalls of [false, true]) {
      for (const [limit, max] of [[500, 1000], [1000, 0], [300, 1000]] as const) {
        const s = run([[0, limit]], 60, { ...SETTINGS, maxRate: max }, 20, stalls, 100);
        const after = share(s, 10, 60, limit);
        expect(after.achieved, `limit ${limit}, stalls ${stalls}`).toBeGreaterThanOrEqual(0.95);
        expect(after.throttled, `limit ${limit}, stalls ${stalls}`).toBeLessThanOrEqual(0.01);
      }
    }
  });

  it('never goes above the configured rate when the SMSC allows more', () => {
    const s = run([[0, 2000]], 20);
    expect(s.every((x) => x.throttled === 0)).toBe(true);
    expect(s.slice(1).every((x) => x.accepted <= 1000 + 20)).toBe(true);
  });

  it('paces an unpaced sender from its first throttle on', () => {
    const s = run([[0, 1000]], 40, { ...SETTINGS, maxRate: 0 });
    const after = share(s, 10, 40, 1000);
    expect(after.achieved).toBeGreaterThanOrEqual(0.95);
    expect(after.throttled).toBeLessThanOrEqual(0.01);
  });
});

describe('RateController', () => {
  it('measures what the SMSC accepted while saturated, and settles backoff below it', () => {
    const c = new RateController(SETTINGS, 0);
    expect(c.onThrottled(0)).toBe('measuring');
    expect(c.measuring).toBe(true);
    // The rate holds while measuring (200 ms, 100 acceptances): 500 accepted per second, throttled all along.
    for (let t = 1; t < 200; t++) {
      if (t % 2 === 0) expect(c.onAccepted(t)).toBeUndefined();
      else expect(c.onThrottled(t)).toBe('counted');
      expect(c.rate(t)).toBe(1000);
    }
    const learned = c.onAccepted(200);
    expect(learned).toEqual({ limit: 500, rate: 485, previous: undefined });
    expect(c.limit).toBe(500);
    expect(c.measuring).toBe(false);
    expect(c.episodes).toBe(1);
    expect(c.throttled).toBe(101);
  });

  it('takes a throttle that does not last (a burst) as the limit being where the rate was', () => {
    const c = new RateController(SETTINGS, 0);
    c.onThrottled(0);
    // Accepted at 800/s, and only the first answer was refused: the SMSC was not saturated.
    let learned;
    for (let t = 1; learned === undefined; t++) learned = c.onAccepted(t * 1.25);
    expect(learned.limit).toBe(1000);
    expect(learned.rate).toBe(970);
  });

  it('climbs back only while the sender waits on it: linearly to the limit, faster past it', () => {
    const c = new RateController(SETTINGS, 0);
    c.resume(500, 0);
    expect(c.rate(0)).toBe(485);
    expect(c.rate(5_000)).toBe(485); // idle: no climb
    c.noteLimited();
    expect(c.rate(6_000)).toBeCloseTo(490);
    for (let t = 6_100; t <= 8_000; t += 100) {
      c.noteLimited();
      c.rate(t);
    }
    expect(c.rate(8_000)).toBeCloseTo(500);
    let t = 8_000;
    while (c.rate(t) < 1000 && t < 20_000) {
      t += 100;
      c.noteLimited();
    }
    expect(t).toBeLessThan(16_000);
    expect(c.rate(t)).toBe(1000);
  });

  it('ends a measurement refused throughout after 2 s, at the floor', () => {
    const c = new RateController(SETTINGS, 0);
    for (let t = 0; t < 2_000; t += 10) c.onThrottled(t);
    expect(c.tick(1_999)).toBeUndefined();
    expect(c.tick(2_000)).toMatchObject({ limit: 10, rate: 10 });
  });

  it('pauses when told to', () => {
    const c = new RateController({ ...SETTINGS, pauseMs: 1_000 }, 0);
    c.onThrottled(0);
    expect(c.pauseLeft(10)).toBe(990);
    expect(c.isSlowed(10)).toBe(true);
  });
});
