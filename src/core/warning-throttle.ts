/**
 * Warnings about what a peer sends, logged once per kind per interval: the first at once with its
 * details, the repeats counted, and when the interval ends one line with how many there were and
 * the details of the last. A hostile or broken SMSC can send thousands of bad PDUs a second; one
 * line per PDU would bury everything else in the log (and cost more CPU than the PDUs).
 *
 * Kinds are a bounded set chosen by the code (an event name, scoped to an upstream or bind), never
 * a value from the wire: `maxKinds` holds the map bounded even so. One timer for all kinds, armed
 * only while a repeat waits to be told.
 */
import type { Clock, TimerHandle } from './clock.js';
import type { Log } from './log.js';

/** Default interval between two lines of one kind, ms (`log.warningIntervalSeconds`). */
export const DEFAULT_WARNING_INTERVAL_MS = 60_000;
/**
 * Kinds tracked at most; past that, the kinds whose interval has ended are dropped (at most once
 * per interval), and if none has, new kinds share one (`OTHER`).
 */
const MAX_KINDS = 1_000;
const OTHER = 'other';

type Level = 'error' | 'warn' | 'info';

interface Line {
  log: Log;
  level: Level;
  fields: object;
  message: string;
}

/** A `WarningThrottle` bound to one log and one scope (an upstream, a bind): its kinds are `kind@scope`. */
export interface ScopedWarnings {
  error(kind: string, fields: object, message: string): void;
  warn(kind: string, fields: object, message: string): void;
  info(kind: string, fields: object, message: string): void;
}

interface KindState {
  /** Monotonic ms: repeats before this are counted, not logged. */
  until: number;
  /** Repeats counted since the last line. */
  repeats: number;
  /** The last repeat, told with the count. */
  last: Line | undefined;
}

export class WarningThrottle {
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #kinds = new Map<string, KindState>();
  #timer: { at: number; handle: TimerHandle } | undefined;
  /** Monotonic ms: before this, a full map is not swept again for ended intervals. */
  #nextSweep = -Infinity;
  #closed = false;

  /** `intervalMs` ≥ 0; 0 logs every occurrence (nothing is held, no timer). */
  constructor(clock: Clock, intervalMs: number = DEFAULT_WARNING_INTERVAL_MS) {
    this.#clock = clock;
    this.#intervalMs = Math.max(0, intervalMs);
  }

  /** As `warn`, at error: for a failure of smppd's own that repeats (a store failing each deliver_sm, a fault in the submit path); one line per occurrence would flood the log as a bad SMSC would. */
  error(log: Log, kind: string, fields: object, message: string): void {
    this.#note(kind, { log, level: 'error', fields, message });
  }

  /** Logs at warn, once per `kind` per interval (see the class). */
  warn(log: Log, kind: string, fields: object, message: string): void {
    this.#note(kind, { log, level: 'warn', fields, message });
  }

  /** As `warn`, at info: for what is expected now and then but must not flood (receipts of other systems aged out). */
  info(log: Log, kind: string, fields: object, message: string): void {
    this.#note(kind, { log, level: 'info', fields, message });
  }

  /** This throttle for `log`, each kind counted apart per `scope`. */
  scoped(log: Log, scope: string): ScopedWarnings {
    return {
      error: (kind, fields, message) => this.error(log, `${kind}@${scope}`, fields, message),
      warn: (kind, fields, message) => this.warn(log, `${kind}@${scope}`, fields, message),
      info: (kind, fields, message) => this.info(log, `${kind}@${scope}`, fields, message),
    };
  }

  /** Tells every count not yet told and stops holding anything back: each later call logs at once. */
  close(): void {
    this.#timer?.handle.cancel();
    this.#timer = undefined;
    for (const state of this.#kinds.values()) this.#tell(state);
    this.#kinds.clear();
    this.#closed = true;
  }

  #note(kind: string, line: Line): void {
    if (this.#intervalMs === 0 || this.#closed) return emit(line, {});
    const now = this.#clock.now();
    const key = this.#keyOf(kind, now);
    const state = this.#kinds.get(key);
    if (state === undefined || now >= state.until) {
      // A new interval: what the last one counted first (its timer may not have run yet), then this one at once.
      if (state !== undefined) this.#tell(state);
      this.#kinds.set(key, { until: now + this.#intervalMs, repeats: 0, last: undefined });
      return emit(line, {});
    }
    state.repeats++;
    state.last = line;
    this.#arm(state.until);
  }

  /** Logs the count of `state`'s repeats, if any, and starts its next interval. */
  #tell(state: KindState): void {
    if (state.repeats === 0 || state.last === undefined) return;
    const seconds = this.#intervalMs / 1000;
    emit({ ...state.last, message: `${state.last.message} (${state.repeats} more in the last ${seconds} s; details of the last)` },
      { repeated: state.repeats, intervalSeconds: seconds });
    state.repeats = 0;
    state.last = undefined;
  }

  /**
   * `kind`, or `OTHER` when MAX_KINDS are tracked and none of them has ended its interval. Ended
   * ones are otherwise dropped only when the timer runs, and it runs only for kinds with repeats.
   */
  #keyOf(kind: string, now: number): string {
    if (this.#kinds.has(kind) || this.#kinds.size < MAX_KINDS) return kind;
    // A flood of new kinds sweeps the map once per interval, not once per warning.
    if (now < this.#nextSweep) return OTHER;
    this.#nextSweep = now + this.#intervalMs;
    this.#sweep(now);
    return this.#kinds.size < MAX_KINDS ? kind : OTHER;
  }

  #arm(at: number): void {
    if (this.#timer !== undefined && this.#timer.at <= at) return;
    this.#timer?.handle.cancel();
    this.#timer = { at, handle: this.#clock.setTimer(at - this.#clock.now(), () => this.#onTimer()) };
  }

  #onTimer(): void {
    this.#timer = undefined;
    const next = this.#sweep(this.#clock.now());
    if (next !== Infinity) this.#arm(next);
  }

  /**
   * Ends the intervals that are over: a kind with repeats has them told and starts a new interval,
   * one without is dropped. Returns when the next interval with repeats ends (Infinity: none).
   */
  #sweep(now: number): number {
    let next = Infinity;
    for (const [kind, state] of this.#kinds) {
      if (now < state.until) {
        if (state.repeats > 0) next = Math.min(next, state.until);
        continue;
      }
      if (state.repeats === 0) {
        this.#kinds.delete(kind);
        continue;
      }
      // Told now, and a new interval starts: a kind that goes on is one line per interval.
      this.#tell(state);
      state.until = now + this.#intervalMs;
    }
    return next;
  }
}

function emit(line: Line, extra: object): void {
  line.log[line.level]({ ...line.fields, ...extra }, line.message);
}
