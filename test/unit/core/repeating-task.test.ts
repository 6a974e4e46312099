import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { RepeatingTask } from '../../../src/core/repeating-task.js';

/** A task whose runs wait until the test ends them, one at a time. */
function setup(everyMs = 1_000) {
  const clock = new ManualClock();
  const started: number[] = [];
  const errors: unknown[] = [];
  let finish: Array<(e?: Error) => void> = [];
  const task = new RepeatingTask({
    clock, everyMs,
    run: () => new Promise<void>((resolve, reject) => {
      started.push(clock.now());
      finish.push((e) => (e ? reject(e) : resolve()));
    }),
    onError: (e) => errors.push(e),
  });
  /** Ends the run under way and lets its continuation run. */
  const end = async (e?: Error): Promise<void> => {
    const f = finish;
    finish = [];
    for (const fn of f) fn(e);
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return { clock, task, started, errors, end, running: () => finish.length };
}

describe('RepeatingTask', () => {
  it('runs at start, then everyMs after each run ended, never two at once', async () => {
    const { clock, task, started, end, running } = setup();
    task.start();
    expect(started).toEqual([0]);
    clock.advance(5_000); // the run is slow: nothing starts beside it
    expect(running()).toBe(1);
    await end();
    clock.advance(999);
    expect(started).toEqual([0]);
    clock.advance(1);
    expect(started).toEqual([0, 6_000]);
  });

  it('starts after firstInMs when told, and a second start changes nothing', () => {
    const { clock, task, started } = setup();
    task.start(500);
    task.start();
    expect(started).toEqual([]);
    clock.advance(500);
    expect(started).toEqual([500]);
  });

  it('runNow runs at once when idle (its scheduled run dropped), or once right after the run under way however often asked', async () => {
    const { clock, task, started, end } = setup();
    task.start(10_000);
    task.runNow();
    expect(started).toEqual([0]);
    task.runNow();
    task.runNow();
    await end();
    expect(started).toEqual([0, 0]);
    await end();
    clock.advance(10_000); // the first schedule is gone: the next is everyMs after the last run
    expect(started).toEqual([0, 0, 1_000]);
  });

  it('a run that fails is reported and the task goes on', async () => {
    const { clock, task, started, errors, end } = setup();
    task.start();
    await end(new Error('store gone'));
    expect(errors).toEqual([new Error('store gone')]);
    clock.advance(1_000);
    expect(started).toEqual([0, 1_000]);
  });

  it('stop waits for the run under way and makes no more, even when one was asked for', async () => {
    const { clock, task, started, end } = setup();
    task.start();
    task.runNow();
    let stopped = false;
    const stopping = task.stop().then(() => { stopped = true; });
    await Promise.resolve();
    expect(stopped).toBe(false);
    await end();
    await stopping;
    task.runNow();
    clock.advance(10_000);
    expect(started).toEqual([0]);
    expect(clock.pendingTimers).toBe(0);
  });
});
