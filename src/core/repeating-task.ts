/**
 * Background work that runs now and then against a store, one run at a time: the next run is timed
 * from the end of the one before, so a slow store never has two runs at once, and a run asked for
 * while one is under way runs once right after it.
 */
import type { Clock, TimerHandle } from './clock.js';

export interface RepeatingTaskOptions {
  clock: Clock;
  /** Milliseconds from the end of one run to the start of the next (≥ 0). */
  everyMs: number;
  /** One run. */
  run: () => Promise<void>;
  /** A run that threw or rejected; the task goes on (the next run at its time). */
  onError: (e: unknown) => void;
}

export class RepeatingTask {
  readonly #o: RepeatingTaskOptions;
  #timer: TimerHandle | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = true;

  constructor(o: RepeatingTaskOptions) {
    this.#o = o;
  }

  /** Runs now (`firstInMs` undefined) or after `firstInMs`, then every `everyMs` after each run. A started task ignores it. */
  start(firstInMs?: number): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    if (firstInMs === undefined) this.runNow();
    else this.#schedule(firstInMs);
  }

  /** Runs now, or right after the run under way; the run's scheduled time is dropped. Nothing once stopped. */
  runNow(): void {
    if (this.#stopped) return;
    if (this.#running !== undefined) {
      this.#again = true;
      return;
    }
    this.#timer?.cancel();
    this.#timer = undefined;
    // An async wrapper: a `run` that throws before its first await is a rejection too.
    this.#running = (async () => this.#o.run())()
      .catch((e: unknown) => this.#o.onError(e))
      .finally(() => {
        this.#running = undefined;
        if (this.#again) {
          this.#again = false;
          this.runNow();
        } else {
          this.#schedule(this.#o.everyMs);
        }
      });
  }

  /** No more runs; resolves when the run under way (if any) is over. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#again = false;
    this.#timer?.cancel();
    this.#timer = undefined;
    await this.#running;
  }

  #schedule(ms: number): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    if (this.#stopped) return;
    this.#timer = this.#o.clock.setTimer(ms, () => {
      this.#timer = undefined;
      this.runNow();
    });
  }
}
