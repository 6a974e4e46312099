/** A scheduled callback that can be cancelled. */
export interface TimerHandle {
  cancel(): void;
}

/**
 * The one source of time. Everything that paces, expires, retries or schedules takes a Clock,
 * so tests drive time with `ManualClock` instead of sleeping.
 */
export interface Clock {
  /** Monotonic milliseconds (fractional), for durations and rates. */
  now(): number;
  /** Wall-clock milliseconds since the epoch, for timestamps that leave the process. */
  wallNow(): number;
  /** Calls `fn` once after `ms` milliseconds. */
  setTimer(ms: number, fn: () => void): TimerHandle;
}

export class SystemClock implements Clock {
  now(): number {
    return performance.now();
  }

  wallNow(): number {
    return Date.now();
  }

  setTimer(ms: number, fn: () => void): TimerHandle {
    const t = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(t) };
  }
}

interface ManualTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/** A clock that moves only when told to; timers fire in time order during `advance`. */
export class ManualClock implements Clock {
  #now: number;
  #wallOffset: number;
  #timers: ManualTimer[] = [];
  #seq = 0;

  constructor(start = 0, wallStart = Date.UTC(2026, 0, 1)) {
    this.#now = start;
    this.#wallOffset = wallStart - start;
  }

  now(): number {
    return this.#now;
  }

  wallNow(): number {
    return this.#now + this.#wallOffset;
  }

  setTimer(ms: number, fn: () => void): TimerHandle {
    const timer: ManualTimer = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn, cancelled: false };
    this.#timers.push(timer);
    return { cancel: () => { timer.cancelled = true; } };
  }

  /** Number of timers still waiting to fire. */
  get pendingTimers(): number {
    return this.#timers.filter((t) => !t.cancelled).length;
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way, in order. */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      const next = this.#nextDue(target);
      if (!next) break;
      this.#now = Math.max(this.#now, next.at);
      next.fn();
    }
    this.#now = target;
  }

  #nextDue(limit: number): ManualTimer | undefined {
    this.#timers = this.#timers.filter((t) => !t.cancelled);
    let best: ManualTimer | undefined;
    for (const t of this.#timers) {
      if (t.at <= limit && (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq))) best = t;
    }
    if (best) best.cancelled = true;
    return best;
  }
}
