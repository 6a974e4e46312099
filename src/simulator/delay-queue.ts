import type { Clock, TimerHandle } from '../core/clock.js';
import { MinHeap } from '../core/min-heap.js';

interface Entry<T> {
  at: number;
  seq: number;
  item: T;
}

/**
 * Items that fall due at a time, kept in a binary heap and drained by one timer armed for the
 * earliest: one timer per queue, not one per PDU. `onDue` gets every item due at once, in
 * due order (ties in insertion order), so the caller can write them in one batch.
 *
 * `minGapMs` (read at every arming; default 0) spaces the drains at least that far apart: an
 * item that falls due sooner after the last drain waits for the next, at most `minGapMs` late,
 * and leaves with everything else due by then. An item due after a quiet spell is on time.
 */
export class DelayQueue<T> {
  readonly #heap = new MinHeap<Entry<T>>(before);
  #seq = 0;
  #timer: TimerHandle | undefined;
  #armedAt = Infinity;
  #lastDrain = -Infinity;

  constructor(
    private readonly clock: Clock,
    private readonly onDue: (items: T[]) => void,
    private readonly minGapMs: () => number = () => 0,
  ) {}

  get size(): number {
    return this.#heap.size;
  }

  /** Queues `item` to fall due `delayMs` from now. */
  push(delayMs: number, item: T): void {
    const at = this.clock.now() + Math.max(0, delayMs);
    this.#heap.push({ at, seq: this.#seq++, item });
    if (at < this.#armedAt) {
      const when = Math.max(at, this.#lastDrain + this.minGapMs());
      if (when < this.#armedAt) this.#arm(when);
    }
  }

  /** Removes and returns everything still waiting, and cancels the timer. */
  clear(): T[] {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#armedAt = Infinity;
    return this.#heap.drain().map((e) => e.item);
  }

  #arm(at: number): void {
    this.#timer?.cancel();
    this.#armedAt = at;
    this.#timer = this.clock.setTimer(at - this.clock.now(), () => this.#fire());
  }

  #fire(): void {
    this.#timer = undefined;
    this.#armedAt = Infinity;
    const now = this.clock.now();
    this.#lastDrain = now;
    // A timer may fire a fraction of a millisecond before the monotonic clock reaches `at`.
    const limit = now + 1;
    const due: T[] = [];
    for (let first = this.#heap.peek(); first !== undefined && first.at <= limit; first = this.#heap.peek()) {
      this.#heap.pop();
      due.push(first.item);
    }
    const later = this.#heap.peek();
    if (later !== undefined) this.#arm(Math.max(later.at, now + this.minGapMs()));
    if (due.length > 0) this.onDue(due);
  }
}

function before<T>(a: Entry<T>, b: Entry<T>): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
