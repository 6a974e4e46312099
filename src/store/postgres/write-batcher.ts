/**
 * Group commit for the PostgreSQL store: concurrent writes of one kind (accepts, submit
 * outcomes, receipts) share one transaction whose statements each carry the whole batch
 * (DESIGN.md: "the store takes writes in small group commits"). A write costs a few round trips
 * and a WAL flush however many rows it carries, so under load the batches grow and the rate with
 * them; a lone write starts at once and waits for nothing.
 *
 * At most `concurrency` transactions of a kind run at a time; writes that arrive meanwhile queue
 * and the next free slot takes up to `maxBatch` of them. No timer: a batch is what queued while
 * the previous ones ran.
 *
 * Writes that name keys (`keysOf`: the receipt keys and messages they touch) are taken in order
 * except that one whose keys a running transaction holds waits, and so does every later write
 * sharing a key with a waiting one: writes of one key commit in the order they came, and a
 * transaction never starts only to wait for another's locks. Without this, the receipts of the
 * outcomes in one transaction filled the next, which waited on the first's locks for half its
 * time, and the two slots ran one after the other.
 *
 * When a batch of several writes fails (one write names a message that does not exist, a
 * deadlock that outlived its retries), its transaction has rolled back as a whole, and each
 * write runs again alone in a transaction of its own: only the write that fails alone is
 * rejected. Writes are re-runnable for the same reason `Db.transaction` needs them to be.
 */

export interface WriteBatcherOptions<I, O> {
  /** Runs the writes in one transaction; returns one result per write, in order. */
  runBatch: (items: readonly I[]) => Promise<O[]>;
  /** Transactions of this kind at a time. At least 1. */
  concurrency: number;
  /** Writes in one transaction at most. At least 1. */
  maxBatch: number;
  /** The keys a write locks; two writes that share one never run in transactions side by side. Default none. */
  keysOf?: (item: I) => readonly string[];
}

export interface WriteBatcherStats {
  /** Transactions run with more than one write, and the writes they carried. */
  batches: number;
  batchedWrites: number;
  /** Batches that failed and were run again one write at a time. */
  splits: number;
  queued: number;
}

interface Pending<I, O> {
  item: I;
  keys: readonly string[];
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

export class WriteBatcher<I, O> {
  readonly #options: WriteBatcherOptions<I, O>;
  #queue: Array<Pending<I, O>> = [];
  #running = 0;
  /** The keys of the running transactions' writes. */
  readonly #busy = new Set<string>();
  /**
   * Set while a slot is free and every queued write waits (for a busy key, or behind a waiting
   * write of its key): the keys of the queued writes. A new write that shares none starts at
   * once; the others queue without a look at the whole queue.
   */
  #waiting: Set<string> | undefined;
  #idleWaiters: Array<() => void> = [];
  #batches = 0;
  #batchedWrites = 0;
  #splits = 0;

  constructor(options: WriteBatcherOptions<I, O>) {
    if (!(options.concurrency >= 1) || !(options.maxBatch >= 1)) throw new RangeError('concurrency and maxBatch must be at least 1');
    this.#options = options;
  }

  get stats(): WriteBatcherStats {
    return { batches: this.#batches, batchedWrites: this.#batchedWrites, splits: this.#splits, queued: this.#queue.length };
  }

  /** Resolves after the transaction that carried the write has committed. */
  write(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      const keys = this.#options.keysOf?.(item) ?? [];
      this.#queue.push({ item, keys, resolve, reject });
      if (this.#waiting !== undefined && keys.some((k) => this.#busy.has(k) || this.#waiting!.has(k))) {
        for (const k of keys) this.#waiting.add(k);
        return;
      }
      this.#pump();
    });
  }

  /** Resolves when every write handed in so far has settled (committed or rejected). */
  drained(): Promise<void> {
    if (this.#running === 0 && this.#queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #pump(): void {
    this.#waiting = undefined;
    while (this.#running < this.#options.concurrency && this.#queue.length > 0) {
      const batch = this.#take();
      if (batch.length === 0) return;
      this.#running++;
      for (const p of batch) for (const k of p.keys) this.#busy.add(k);
      void this.#run(batch).finally(() => {
        this.#running--;
        for (const p of batch) for (const k of p.keys) this.#busy.delete(k);
        this.#pump();
        if (this.#running === 0 && this.#queue.length === 0) for (const resolve of this.#idleWaiters.splice(0)) resolve();
      });
    }
  }

  /** The next batch: the first queued writes whose keys no running transaction holds and no earlier queued write waits on. */
  #take(): Array<Pending<I, O>> {
    const max = this.#options.maxBatch;
    if (this.#options.keysOf === undefined) return this.#queue.splice(0, max);
    const batch: Array<Pending<I, O>> = [];
    const waiting = new Set<string>();
    let rest: Array<Pending<I, O>> = [];
    let i = 0;
    for (; i < this.#queue.length && batch.length < max; i++) {
      const p = this.#queue[i]!;
      if (p.keys.some((k) => this.#busy.has(k) || waiting.has(k))) {
        for (const k of p.keys) waiting.add(k);
        rest.push(p);
      } else {
        batch.push(p);
      }
    }
    if (i < this.#queue.length) rest = rest.concat(this.#queue.slice(i));
    this.#queue = rest;
    if (batch.length === 0) this.#waiting = waiting;
    return batch;
  }

  async #run(batch: Array<Pending<I, O>>): Promise<void> {
    if (batch.length > 1) {
      this.#batches++;
      this.#batchedWrites += batch.length;
    }
    try {
      const results = await this.#options.runBatch(batch.map((p) => p.item));
      batch.forEach((p, i) => p.resolve(results[i] as O));
      return;
    } catch (e) {
      if (batch.length === 1) {
        batch[0]!.reject(e);
        return;
      }
    }
    this.#splits++;
    // One after the other: the writes of a batch often touch the same rows (a receipt and its
    // duplicate), and running them side by side would only make them wait on each other's locks.
    for (const p of batch) {
      try {
        const [result] = await this.#options.runBatch([p.item]);
        p.resolve(result as O);
      } catch (e) {
        p.reject(e);
      }
    }
  }
}
