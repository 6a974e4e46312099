import type { Clock, TimerHandle } from '../core/clock.js';

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
  #heap: Entry<T>[] = [];
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
    return this.#heap.length;
  }

  /** Queues `item` to fall due `delayMs` from now. */
  push(delayMs: number, item: T): void {
    const at = this.clock.now() + Math.max(0, delayMs);
    this.#insert({ at, seq: this.#seq++, item });
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
    const items = this.#heap.sort((a, b) => a.at - b.at || a.seq - b.seq).map((e) => e.item);
    this.#heap = [];
    return items;
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
    while (this.#heap.length > 0 && this.#heap[0]!.at <= limit) due.push(this.#pop().item);
    if (this.#heap.length > 0) this.#arm(Math.max(this.#heap[0]!.at, now + this.minGapMs()));
    if (due.length > 0) this.onDue(due);
  }

  #insert(e: Entry<T>): void {
    const h = this.#heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  #pop(): Entry<T> {
    const h = this.#heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l]!, h[m]!)) m = l;
        if (r < h.length && before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}

function before<T>(a: Entry<T>, b: Entry<T>): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
