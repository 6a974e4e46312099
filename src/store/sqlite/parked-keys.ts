/**
 * Which keys have receipts parked under them, kept in memory so that a submit outcome looks in
 * the parking only when a receipt may wait there: most outcomes find none, and the look costs as
 * much as a statement of the write itself. Counted per key (a receipt is parked under each of
 * its candidate keys, and an SMSC may send a receipt twice).
 *
 * As with `StatusCache`, this connection is the file's only writer, so the counts follow its own
 * inserts and deletes. They are read from the file when first needed, and again after anything
 * that deletes in bulk or rolls back (`invalidate`). Past `limit` keys they are not kept at all
 * and every outcome looks (memory stays bounded when receipts for other systems pile up); the
 * next invalidation (the hourly prune of old parked receipts) counts again.
 */
import type { Sql } from './sql.js';

/** Keys counted at most by default; past that, every submit outcome looks in the parking. */
export const DEFAULT_PARKED_KEYS_LIMIT = 100_000;

const KEYS_SQL = 'SELECT upstream, key FROM parked_receipt_keys LIMIT ?';

type Counts = Map<string, number>;

export class ParkedKeys {
  readonly #limit: number;
  /** null: not read yet, or invalidated; 'too many': over the limit. */
  #counts: Counts | null | 'too many' = null;

  constructor(limit: number = DEFAULT_PARKED_KEYS_LIMIT) {
    this.#limit = Math.max(0, Math.floor(limit));
  }

  /** False only when no receipt is parked under this key of this upstream. */
  mayHave(sql: Sql, upstream: string, key: string): boolean {
    const counts = this.#read(sql);
    return counts === 'too many' || counts.has(id(upstream, key));
  }

  /** A receipt was parked under `keys` (each once). */
  parked(upstream: string, keys: readonly string[]): void {
    const counts = this.#counts;
    if (counts === null || counts === 'too many') return;
    for (const key of keys) {
      const k = id(upstream, key);
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    if (counts.size > this.#limit) this.#counts = 'too many';
  }

  /** A parked receipt was deleted, and with it its `keys`. */
  unparked(upstream: string, keys: readonly string[]): void {
    const counts = this.#counts;
    if (counts === null || counts === 'too many') return;
    for (const key of keys) {
      const k = id(upstream, key);
      const n = (counts.get(k) ?? 0) - 1;
      if (n > 0) counts.set(k, n);
      else counts.delete(k);
    }
  }

  /** Forgets the counts: they are read from the file again when next needed. */
  invalidate(): void {
    this.#counts = null;
  }

  #read(sql: Sql): Counts | 'too many' {
    if (this.#counts !== null) return this.#counts;
    const rows = sql.all<{ upstream: string; key: string }>(KEYS_SQL, this.#limit + 1);
    if (rows.length > this.#limit) {
      this.#counts = 'too many';
      return this.#counts;
    }
    const counts: Counts = new Map();
    for (const r of rows) {
      const k = id(r.upstream, r.key);
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    this.#counts = counts;
    return counts;
  }
}

function id(upstream: string, key: string): string {
  return `${upstream}\u0000${key}`;
}
