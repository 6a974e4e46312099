/**
 * Which keys have receipts parked under them, kept in memory so that a submit outcome looks in
 * the parking only when a receipt may wait there: most outcomes find none, and the look costs as
 * much as a statement of the write itself. Counted per key (a receipt is parked under each of
 * its candidate keys, and an SMSC may send a receipt twice).
 *
 * As with `StatusCache`, this connection is the file's only writer, so the counts follow its own
 * inserts and deletes. They are read from the file when first needed, and again after anything
 * that deletes in bulk or rolls back (`invalidate`). Past `limit` parked keys they are not kept
 * and every outcome looks (memory stays bounded when receipts for other systems pile up); the
 * parked keys are then counted in the file every `recountEvery` looks, and once they are under
 * half the limit the keys are read again.
 */
/** Parked keys counted at most by default; past that, every submit outcome looks in the parking. */
export const DEFAULT_PARKED_KEYS_LIMIT = 100_000;
/** Over the limit: looks between two counts of the parked keys by default (a count reads their index). */
export const DEFAULT_PARKED_RECOUNT_EVERY = 10_000;

const KEYS_SQL = 'SELECT upstream, key FROM parked_receipt_keys LIMIT ?';
const COUNT_SQL = 'SELECT COUNT(*) AS n FROM parked_receipt_keys';

/** What the counts read the file through: the connection's `Sql`, which holds the `ParkedKeys` (so not imported here). */
export interface ParkedKeysSource {
  get<T>(source: string, ...params: unknown[]): T | undefined;
  all<T>(source: string, ...params: unknown[]): T[];
}

export class ParkedKeys {
  readonly #limit: number;
  readonly #recountEvery: number;
  /** Parked receipts by key, or null: not read yet, invalidated, or over the limit (`#over`). */
  #counts: Map<string, number> | null = null;
  /** Entries in `#counts` (a key parked twice is two). */
  #entries = 0;
  /** Over the limit: looks since the keys were last counted. */
  #over: { looks: number } | null = null;

  constructor(limit: number = DEFAULT_PARKED_KEYS_LIMIT, recountEvery: number = DEFAULT_PARKED_RECOUNT_EVERY) {
    this.#limit = Math.max(0, Math.floor(limit));
    this.#recountEvery = Math.max(1, Math.floor(recountEvery));
  }

  /** False only when no receipt is parked under this key of this upstream. */
  mayHave(sql: ParkedKeysSource, upstream: string, key: string): boolean {
    const counts = this.#read(sql);
    return counts === null || counts.has(id(upstream, key));
  }

  /** A receipt was parked under `keys` (each once). */
  parked(upstream: string, keys: readonly string[]): void {
    const counts = this.#counts;
    if (counts === null) return;
    for (const key of keys) {
      const k = id(upstream, key);
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    this.#entries += keys.length;
    if (this.#entries > this.#limit) this.#overLimit();
  }

  /** A parked receipt was deleted, and with it its `keys`. */
  unparked(upstream: string, keys: readonly string[]): void {
    const counts = this.#counts;
    if (counts === null) return;
    for (const key of keys) {
      const k = id(upstream, key);
      const n = (counts.get(k) ?? 0) - 1;
      if (n > 0) counts.set(k, n);
      else counts.delete(k);
    }
    this.#entries = Math.max(0, this.#entries - keys.length);
  }

  /** Forgets the counts: they are read from the file again when next needed. */
  invalidate(): void {
    this.#counts = null;
    this.#entries = 0;
    this.#over = null;
  }

  /** The counts, or null while over the limit. */
  #read(sql: ParkedKeysSource): Map<string, number> | null {
    if (this.#counts !== null) return this.#counts;
    if (this.#over !== null) {
      if (++this.#over.looks < this.#recountEvery) return null;
      const n = sql.get<{ n: number }>(COUNT_SQL)?.n ?? 0;
      if (n * 2 > this.#limit) {
        this.#over.looks = 0;
        return null;
      }
      this.#over = null;
    }
    const rows = sql.all<{ upstream: string; key: string }>(KEYS_SQL, this.#limit + 1);
    if (rows.length > this.#limit) {
      this.#overLimit();
      return null;
    }
    const counts = new Map<string, number>();
    for (const r of rows) {
      const k = id(r.upstream, r.key);
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    this.#counts = counts;
    this.#entries = rows.length;
    return counts;
  }

  #overLimit(): void {
    this.#counts = null;
    this.#entries = 0;
    this.#over = { looks: 0 };
  }
}

function id(upstream: string, key: string): string {
  return `${upstream}\u0000${key}`;
}
