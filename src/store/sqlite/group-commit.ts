/**
 * The write queue of the SQLite store: writes that arrive within `windowMs` share one
 * transaction (DESIGN.md: "the store takes writes in small group commits"). One that throws is
 * rolled back alone and rejects only its caller; the others commit. Every promise settles after
 * the COMMIT has returned, so a caller that sees its write resolved can rely on it surviving a
 * crash, and any read made afterwards sees it.
 *
 * A batch first runs its operations one after the other without savepoints (a savepoint and its
 * release cost as much as a small write, and almost no operation throws). When one throws, the
 * whole transaction rolls back and the batch runs again with a savepoint per operation, so the
 * failing one is undone alone. Operations are therefore written to be re-runnable: they read and
 * write the database, and what they keep in memory of it is dropped by `onRollback` whenever
 * something they did is undone.
 *
 * Within a batch, writes marked `first` run before the others. The callers of one batch are all
 * still waiting, so any order is a valid one; submit outcomes go first so that a receipt that
 * arrived in the same few milliseconds finds the SMSC id its part just got instead of being parked,
 * and claims so that the binds are not kept waiting behind a bulk upload's accepts. (A claim may
 * so take a message of a batch whose pause is in the same batch of writes: as a claim committed
 * just before the pause would have; a pause never recalls what was claimed.)
 */
import type Database from 'better-sqlite3';
import type { Clock, TimerHandle } from '../../core/clock.js';
import { ErrorCode, SmppdError } from '../../core/errors.js';
import { asStoreError } from '../store-error.js';

/** A write: runs synchronously inside the shared transaction; may run twice (see above). */
export type WriteOp<T> = () => T;

/** `first`: runs before the batch's other writes (submit outcomes, claims). Default `arrival`. */
export type WriteOrder = 'first' | 'arrival';

export interface GroupCommitOptions {
  clock: Clock;
  /** Milliseconds the first queued write waits for others to join it. Default 2; 0 = next timer turn. */
  windowMs: number;
  /** Queued writes that commit at once without waiting for the window. Default 1000; at least 1. */
  maxBatch: number;
  /**
   * Called whenever writes were rolled back (a whole transaction, or one operation's savepoint),
   * before anything else runs: memory that followed those writes must forget them.
   */
  onRollback?: () => void;
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
  /** Transactions run a second time, with a savepoint per operation, because one operation threw. */
  reruns: number;
}

interface Pending {
  op: WriteOp<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Thrown out of the savepoint-free run when an operation throws, so that run rolls back. */
class OperationFailed extends Error {}

export class GroupCommit {
  readonly #db: Database.Database;
  readonly #clock: Clock;
  readonly #windowMs: number;
  readonly #maxBatch: number;
  readonly #onRollback: () => void;
  /** Runs one operation inside the open transaction: better-sqlite3 makes a nested transaction a savepoint. */
  readonly #savepoint: (op: WriteOp<unknown>) => unknown;
  readonly #batch: Database.Transaction<(ops: Pending[]) => Outcome[]>;
  readonly #batchWithoutSavepoints: Database.Transaction<(ops: Pending[]) => Outcome[]>;
  #queue: Pending[] = [];
  /** Writes marked `first`, committed ahead of `#queue`. */
  #firstQueue: Pending[] = [];
  #timer: TimerHandle | null = null;
  #closed = false;
  #commits = 0;
  #committedOps = 0;
  #failedOps = 0;
  #reruns = 0;

  constructor(db: Database.Database, options: GroupCommitOptions) {
    this.#db = db;
    this.#clock = options.clock;
    this.#windowMs = Math.max(0, options.windowMs);
    this.#maxBatch = Math.max(1, Math.floor(options.maxBatch));
    this.#onRollback = options.onRollback ?? (() => {});
    this.#savepoint = db.transaction((op: WriteOp<unknown>) => op());
    this.#batch = db.transaction((ops: Pending[]) => ops.map((p) => this.#runOne(p)));
    this.#batchWithoutSavepoints = db.transaction((ops: Pending[]) => ops.map((p): Outcome => {
      try {
        return { ok: true, value: p.op() };
      } catch {
        throw new OperationFailed();
      }
    }));
  }

  /** Queues a write; resolves with its result once the transaction it joined has committed. */
  run<T>(op: WriteOp<T>, order: WriteOrder = 'arrival'): Promise<T> {
    if (this.#closed) return Promise.reject(new SmppdError(ErrorCode.INTERNAL, 'the store is closed'));
    return new Promise<T>((resolve, reject) => {
      (order === 'first' ? this.#firstQueue : this.#queue).push({ op, resolve: resolve as (value: unknown) => void, reject });
      if (this.#queued >= this.#maxBatch) this.flush();
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
    while (this.#queued > 0) {
      const ops = this.#firstQueue.splice(0, this.#maxBatch);
      if (ops.length < this.#maxBatch) ops.push(...this.#queue.splice(0, this.#maxBatch - ops.length));
      this.#commit(ops);
    }
  }

  get #queued(): number {
    return this.#firstQueue.length + this.#queue.length;
  }

  /** Commits what is queued and refuses further writes. */
  close(): void {
    this.flush();
    this.#closed = true;
  }

  get stats(): GroupCommitStats {
    return { commits: this.#commits, committedOps: this.#committedOps, failedOps: this.#failedOps, queued: this.#queued, reruns: this.#reruns };
  }

  #commit(ops: Pending[]): void {
    let outcomes: Outcome[];
    try {
      // IMMEDIATE: take the write lock at BEGIN, so a busy file fails here (after busy_timeout), not half-way.
      try {
        outcomes = this.#batchWithoutSavepoints.immediate(ops);
      } catch (e) {
        if (!(e instanceof OperationFailed)) throw e;
        // Rolled back: run it again, each operation in its own savepoint.
        this.#onRollback();
        this.#reruns++;
        outcomes = this.#batch.immediate(ops);
      }
    } catch (e) {
      // The transaction did not commit: no operation of it happened.
      this.#onRollback();
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
      this.#onRollback();
      // Some SQLite errors (SQLITE_FULL, SQLITE_IOERR) end the whole transaction: then nothing
      // of the batch can commit, and every caller must hear so.
      if (!this.#db.inTransaction) throw e;
      return { ok: false, error: asStoreError(e, 'a store write failed') };
    }
  }
}
