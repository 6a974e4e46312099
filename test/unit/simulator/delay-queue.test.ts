import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { DelayQueue } from '../../../src/simulator/delay-queue.js';

describe('DelayQueue', () => {
  it('drains due items in due order, in batches, from a single timer', () => {
    const clock = new ManualClock();
    const batches: number[][] = [];
    const q = new DelayQueue<number>(clock, (items) => batches.push(items));
    for (const [delay, v] of [[30, 3], [10, 1], [10, 2], [50, 5], [40, 4]] as const) q.push(delay, v);
    expect(clock.pendingTimers).toBe(1);
    clock.advance(10);
    expect(batches).toEqual([[1, 2]]);
    clock.advance(35);
    expect(batches).toEqual([[1, 2], [3], [4]]);
    expect(q.size).toBe(1);
    expect(clock.pendingTimers).toBe(1);
    expect(q.clear()).toEqual([5]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('re-arms earlier when an earlier item arrives', () => {
    const clock = new ManualClock();
    const got: string[] = [];
    const q = new DelayQueue<string>(clock, (items) => got.push(...items));
    q.push(100, 'late');
    q.push(5, 'early');
    clock.advance(5);
    expect(got).toEqual(['early']);
    clock.advance(95);
    expect(got).toEqual(['early', 'late']);
  });

  it('drains at most once per minGapMs, each item at most that late, and on time after a quiet spell', () => {
    const clock = new ManualClock();
    const batches: Array<[number, string[]]> = [];
    const q = new DelayQueue<string>(clock, (items) => batches.push([clock.now(), items]), () => 10);
    q.push(5, 'a');
    q.push(7, 'b');
    q.push(9, 'c');
    q.push(20, 'd');
    q.push(40, 'e');
    clock.advance(100);
    expect(batches).toEqual([[5, ['a']], [15, ['b', 'c']], [25, ['d']], [40, ['e']]]);
  });
});
