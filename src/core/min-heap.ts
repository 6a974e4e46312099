/** A binary min-heap: `push` and `pop` in O(log n), the least item (by `before`) on top. */
export class MinHeap<T> {
  #items: T[] = [];

  /** @param before Whether `a` comes out before `b`; a strict order (ties broken by the caller). */
  constructor(private readonly before: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.#items.length;
  }

  /** The least item, left in place; undefined when empty. */
  peek(): T | undefined {
    return this.#items[0];
  }

  push(item: T): void {
    const h = this.#items;
    h.push(item);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  /** Removes and returns the least item; undefined when empty. */
  pop(): T | undefined {
    const h = this.#items;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last !== undefined) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.before(h[l]!, h[m]!)) m = l;
        if (r < h.length && this.before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }

  /** Removes and returns every item, least first. */
  drain(): T[] {
    const items = this.#items.sort((a, b) => (this.before(a, b) ? -1 : this.before(b, a) ? 1 : 0));
    this.#items = [];
    return items;
  }
}
