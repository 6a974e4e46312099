/**
 * Counts events in 10 ms slots over a sliding second: the achieved rate of the last second and
 * the highest count seen in any 1-second window (100 consecutive slots). Pure: time is an argument.
 */
const SLOT_MS = 10;
const SLOTS = 100;

export class RateMeter {
  #slots = new Uint32Array(SLOTS);
  #slot = -1;
  #inWindow = 0;
  #max = 0;

  /** Records one event at `now` (monotonic ms, non-decreasing). */
  record(now: number): void {
    this.#advance(now);
    this.#slots[this.#slot % SLOTS]!++;
    this.#inWindow++;
    if (this.#inWindow > this.#max) this.#max = this.#inWindow;
  }

  /** Events in the second up to `now`. */
  lastSecond(now: number): number {
    this.#advance(now);
    return this.#inWindow;
  }

  /** The highest count in any 1-second window so far. */
  get maxPerSecond(): number {
    return this.#max;
  }

  #advance(now: number): void {
    const slot = Math.floor(now / SLOT_MS);
    if (this.#slot < 0) {
      this.#slot = slot;
      return;
    }
    const steps = Math.min(SLOTS, slot - this.#slot);
    for (let i = 1; i <= steps; i++) {
      const idx = (this.#slot + i) % SLOTS;
      this.#inWindow -= this.#slots[idx]!;
      this.#slots[idx] = 0;
    }
    if (slot > this.#slot) this.#slot = slot;
  }
}
