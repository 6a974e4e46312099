/**
 * Moving a ManualClock on through work that awaits promises between its timers: time goes forward
 * in small steps, and the promise callbacks that each step let loose run before the next one.
 */
import type { ManualClock } from '../../src/core/clock.js';

/** Lets pending promise callbacks run (a few microtask turns), without timers or I/O. */
export async function promiseTurns(n = 10): Promise<void> {
  for (let i = 0; i < n; i++) await Promise.resolve();
}

/** Advances `clock` by `ms` in steps of `stepMs`, letting promise callbacks run after each. */
export async function advanceInSteps(clock: ManualClock, ms: number, stepMs = 10): Promise<void> {
  for (let t = 0; t < ms; t += stepMs) {
    clock.advance(Math.min(stepMs, ms - t));
    await promiseTurns();
  }
}
