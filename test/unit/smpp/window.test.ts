import { describe, expect, it } from 'vitest';
import { Window } from '../../../src/smpp/window.js';

describe('Window', () => {
  it('never holds more than its size', () => {
    const w = new Window<string>(100, 10_000);
    for (let i = 1; i <= 100; i++) expect(w.offer(i, `m${i}`, 0)).toBe(true);
    expect(w.offer(101, 'm101', 0)).toBe(false);
    expect(w.outstanding).toBe(100);
    expect(w.complete(50)?.value).toBe('m50');
    expect(w.offer(101, 'm101', 1)).toBe(true);
  });

  it('expires each request on its own deadline, oldest first', () => {
    const w = new Window<number>(10, 1000);
    w.offer(1, 1, 0);
    w.offer(2, 2, 400);
    w.offer(3, 3, 800);
    expect(w.expire(999)).toEqual([]);
    expect(w.expire(1400).map((e) => e.value)).toEqual([1, 2]);
    expect(w.nextExpiry()).toBe(1800);
  });

  it('does not complete what it does not hold', () => {
    const w = new Window<number>(10, 1000);
    expect(w.complete(1)).toBeUndefined();
    expect(w.offer(1, 1, 0)).toBe(true);
    expect(w.offer(1, 1, 0)).toBe(false);
    expect(w.clear()).toHaveLength(1);
    expect(w.outstanding).toBe(0);
  });
});
