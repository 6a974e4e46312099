/**
 * The valid numbers of one sendbulk file, held compactly until the upload has been counted and
 * let in whole. A valid destination is 7–15 digits without a leading 0 (`checkNumber`), so its
 * value as a number is exact in a double and gives back the same digits: the list keeps each one
 * as 8 bytes of a Float64Array, in file order (a Set of strings held about 60 bytes a number).
 * Duplicates are found by sorting a copy: 8 bytes a number more, and a bit each for "sent", while
 * the numbers are stored; the first occurrence of each number keeps its place in the file.
 */

/** Numbers a list holds before it grows its array (it doubles up to its cap). */
const INITIAL_CAPACITY = 1024;

export class DestinationList {
  #values: Float64Array;
  #length = 0;

  /** @param max Numbers it takes at most (`http.maxBulkNumbers`, ≥ 1). */
  constructor(readonly max: number) {
    this.#values = new Float64Array(Math.min(max, INITIAL_CAPACITY));
  }

  get length(): number {
    return this.#length;
  }

  /** Adds one valid number (`checkNumber` passed); false, and nothing added, when the list holds `max` already. */
  push(n: string): boolean {
    if (this.#length >= this.max) return false;
    if (this.#length === this.#values.length) {
      const grown = new Float64Array(Math.min(this.max, this.#values.length * 2));
      grown.set(this.#values);
      this.#values = grown;
    }
    this.#values[this.#length++] = Number(n);
    return true;
  }

  /** The numbers to send: every one in file order, or (`distinct`) the first occurrence of each, in file order. */
  toSend(distinct: boolean): DestinationsToSend {
    const inOrder = this.#values.subarray(0, this.#length);
    if (!distinct) return { count: inOrder.length, repeats: 0, chunks: (size) => chunksOf(inOrder, size, () => true) };
    const sorted = inOrder.slice().sort();
    let unique = 0;
    for (let i = 0; i < sorted.length; i++) {
      if (i === 0 || sorted[i] !== sorted[unique - 1]) sorted[unique++] = sorted[i]!;
    }
    const keys = sorted.subarray(0, unique);
    // Each reading keeps its own record of the numbers it gave: a reading starts from the file's start.
    const firstOf = (): ((v: number) => boolean) => {
      const sent = new Uint8Array(Math.ceil(unique / 8));
      return (v) => {
        const i = indexOf(keys, v);
        const bit = 1 << (i & 7);
        if ((sent[i >> 3]! & bit) !== 0) return false;
        sent[i >> 3]! |= bit;
        return true;
      };
    };
    return { count: unique, repeats: inOrder.length - unique, chunks: (size) => chunksOf(inOrder, size, firstOf()) };
  }
}

export interface DestinationsToSend {
  /** Numbers to send. */
  count: number;
  /** Repeats left out (0 unless distinct). */
  repeats: number;
  /** The numbers to send as digit strings, `size` at a time, in file order; each call reads them all again. */
  chunks(size: number): Generator<string[]>;
}

function* chunksOf(values: Float64Array, size: number, keep: (v: number) => boolean): Generator<string[]> {
  let chunk: string[] = [];
  for (const v of values) {
    if (!keep(v)) continue;
    chunk.push(String(v));
    if (chunk.length >= size) {
      yield chunk;
      chunk = [];
    }
  }
  if (chunk.length > 0) yield chunk;
}

/** The index of `v` in the ascending `keys`, which hold it. */
function indexOf(keys: Float64Array, v: number): number {
  let lo = 0;
  let hi = keys.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (keys[mid]! < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
