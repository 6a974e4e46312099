/**
 * The write queue of the SQLite store: writes that arrive within `windowMs` share one
 * transaction (DESIGN.md: "the store takes writes in small group commits"). Each operation runs
 * in its own savepoint, so one that throws is rolled back alone and rejects only its caller; the
 * others commit. Every promise settles after the COMMIT has returned, so a caller that sees its
 * write resolved can rely on it surviving a crash, and any read made afterwards sees it.
 */
import type Database from 'better-sqlite3';
import type { Clock, TimerHandle } from '../../core/clock.js';
import { ErrorCode, SmppdError, isSmppdError } from '../../core/errors.js';

/** A write: runs synchronously inside the shared transaction. */
export type WriteOp<T> = () => T;

export interface GroupCommitOptions {
  clock: Clock;
  /** Milliseconds the first queued write waits for others to join it. Default 2; 0 = next timer turn. */
  windowMs: number;
  /** Queued writes that commit at once without waiting for the window. Default 1000; at least 1. */
  maxBatch: number;
}

export interface GroupCommitStats {
  /** Transactions committed. */
  commits: number;
  /** Operations that committed (their savepoint was released). */
  committedOps: number;
  /** Operations rolled back alone (their caller was rejected). */
  failedOps: number;
  /** Writes queued now, waiting for the next commit. */
  queued: number;
}

interface Pending {
  op: WriteOp<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export class GroupCommit {
  readonly #db: Database.Database;
  readonly #clock: Clock;
  readonly #windowMs: number;
  readonly #maxBatch: number;
  /** Runs one operation inside the open transaction: better-sqlite3 makes a nested transaction a savepoint. */
  readonly #savepoint: (op: WriteOp<unknown>) => unknown;
  readonly #batch: Database.Transaction<(ops: Pending[]) => Outcome[]>;
  #queue: Pending[] = [];
  #timer: TimerHandle | null = null;
  #closed = false;
  #commits = 0;
  #committedOps = 0;
  #failedOps = 0;

  constructor(db: Database.Database, options: GroupCommitOptions) {
    this.#db = db;
    this.#clock = options.clock;
    this.#windowMs = Math.max(0, options.windowMs);
    this.#maxBatch = Math.max(1, Math.floor(options.maxBatch));
    this.#savepoint = db.transaction((op: WriteOp<unknown>) => op());
    this.#batch = db.transaction((ops: Pending[]) => ops.map((p) => this.#runOne(p)));
  }

  /** Queues a write; resolves with its result once the transaction it joined has committed. */
  run<T>(op: WriteOp<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new SmppdError(ErrorCode.INTERNAL, 'the store is closed'));
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ op, resolve: resolve as (value: unknown) => void, reject });
      if (this.#queue.length >= this.#maxBatch) this.flush();
      else this.#timer ??= this.#clock.setTimer(this.#windowMs, () => {
        this.#timer = null;
        this.flush();
      });
    });
  }

  /** Commits every queued write now. */
  flush(): void {
    this.#timer?.cancel();
    this.#timer = null;
    while (this.#queue.length > 0) {
      const ops = this.#queue.splice(0, this.#maxBatch);
      this.#commit(ops);
    }
  }

  /** Commits what is queued and refuses further writes. */
  close(): void {
    this.flush();
    this.#closed = true;
  }

  get stats(): GroupCommitStats {
    return { commits: this.#commits, committedOps: this.#committedOps, failedOps: this.#failedOps, queued: this.#queue.length };
  }

  #commit(ops: Pending[]): void {
    let outcomes: Outcome[];
    try {
      // IMMEDIATE: take the write lock at BEGIN, so a busy file fails here (after busy_timeout), not half-way.
      outcomes = this.#batch.immediate(ops);
    } catch (e) {
      // The transaction did not commit: no operation of it happened.
      const error = asStoreError(e, 'the store could not commit');
      for (const p of ops) p.reject(error);
      return;
    }
    this.#commits++;
    outcomes.forEach((outcome, i) => {
      const p = ops[i];
      if (!p) return;
      if (outcome.ok) {
        this.#committedOps++;
        p.resolve(outcome.value);
      } else {
        this.#failedOps++;
        p.reject(outcome.error);
      }
    });
  }

  #runOne(p: Pending): Outcome {
    try {
      return { ok: true, value: this.#savepoint(p.op) };
    } catch (e) {
      // Some SQLite errors (SQLITE_FULL, SQLITE_IOERR) end the whole transaction: then nothing
      // of the batch can commit, and every caller must hear so.
      if (!this.#db.inTransaction) throw e;
      return { ok: false, error: asStoreError(e, 'a store write failed') };
    }
  }
}

/** SmppdErrors pass through; anything else (an SqliteError) becomes INTERNAL with its cause. */
export function asStoreError(e: unknown, message: string): SmppdError {
  if (isSmppdError(e)) return e;
  const detail = e instanceof Error ? e.message : String(e);
  return new SmppdError(ErrorCode.INTERNAL, `${message}: ${detail}`, undefined, { cause: e });
}
