/**
 * A weighted choice compiled once (when the behaviour changes), so the per-PDU cost is one
 * random number and a short scan, or nothing when only one value has weight.
 */
export class WeightedPicker<T> {
  readonly #values: T[];
  readonly #cumulative: number[];
  readonly #only: T | undefined;
  readonly #single: boolean;

  /** `entries` with weights ≥ 0; weights need not sum to 1. At least one weight must be > 0. */
  constructor(entries: ReadonlyArray<readonly [T, number]>) {
    const usable = entries.filter(([, w]) => Number.isFinite(w) && w > 0);
    if (usable.length === 0) throw new RangeError('a weighted mix needs at least one positive weight');
    const total = usable.reduce((sum, [, w]) => sum + w, 0);
    this.#values = usable.map(([v]) => v);
    let running = 0;
    this.#cumulative = usable.map(([, w]) => (running += w / total));
    this.#single = usable.length === 1;
    this.#only = usable[0]![0];
  }

  /** `random` returns a number in [0, 1), like Math.random. */
  pick(random: () => number): T {
    if (this.#single) return this.#only as T;
    const r = random();
    for (let i = 0; i < this.#cumulative.length - 1; i++) {
      if (r < this.#cumulative[i]!) return this.#values[i]!;
    }
    return this.#values[this.#values.length - 1]!;
  }

  /** The only value with weight, or undefined when there are several. */
  get constant(): T | undefined {
    return this.#single ? this.#only : undefined;
  }
}
