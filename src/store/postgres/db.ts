/**
 * The connection pool of the PostgreSQL store and its transactions. Every write runs in one
 * transaction on one pooled connection (`Db.transaction`); a transaction that PostgreSQL aborts
 * for a deadlock or a serialization failure is run again from the start, so operations are
 * written to be re-runnable: they read and write the database and nothing else. Statements are
 * prepared once per connection, by name, the first time a connection runs them, except those
 * marked `plannedEachRun`.
 *
 * The pool's connections are pipelined (pg's `pipeline`): a statement whose result nothing waits
 * for goes out without waiting for the one before it, and PostgreSQL still runs them in order,
 * each after the previous one has finished (READ COMMITTED: each with a snapshot taken when it
 * starts, so a read sent right behind a lock sees what the lock waited for). BEGIN goes with a
 * transaction's first statement, the gathered writes with the statement after them and with
 * COMMIT, and `Tx.send` sends a statement whose result the operation does not read (a lock, an
 * INSERT) with the next one. An accept is two round trips instead of four, a group commit of
 * outcomes and receipts four instead of seven or eight: less time holding its locks and its
 * connection, the more so the farther the database.
 */
import pg from 'pg';
import type { SmppdError } from '../../core/errors.js';
import { asStoreError as storeError } from '../store-error.js';
import { isPlannedEachRun } from './statements.js';
import { FLUSH_SQL, PendingWrites } from './writes.js';

/** int8 (COUNT(*), BIGSERIAL ids, ms timestamps) as a JS number: every value the store keeps is below 2^53. */
const INT8_OID = 20;
export const TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary'): unknown =>
    oid === INT8_OID && format !== 'binary' ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format ?? 'text')) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * The startup options of every connection of the store: its schema, and the planner's join
 * methods. Every join the store makes is by key, with an index on the inner side: a batch's keys
 * (an `unnest` of up to 500) against messages and parts, a claim's parts against their messages,
 * a message against its outbox rows. An index probe per key is the right plan for each at any
 * size of table. Left to its costs, the planner chose hash joins over sequential scans of parts
 * and messages whenever a table had no statistics or old ones: in a new schema, and for the
 * minute or more until autovacuum's first ANALYZE after a burst, every status change then read
 * the whole of both tables, and the lock of a batch was held several times as long. Session
 * settings, not per transaction: a prepared statement keeps the plan made under the settings of
 * its first runs.
 *
 * And no JIT compilation: it starts once a plan's estimated cost passes jit_above_cost, and then
 * compiles the plan's expressions on every run (a prepared statement too) for hundreds of
 * milliseconds. Every statement of the store reads a few hundred rows at most, through indexes,
 * but some are estimated far above that: a claim's walk of each client's queued parts, cut by a
 * LIMIT that is a column, was estimated at tens of thousands of rows and compiled for most of a
 * second on every claim.
 */
export function sessionOptions(schema: string): string {
  return `-c search_path=${schema} -c enable_hashjoin=off -c enable_mergejoin=off -c jit=off`;
}

/** SQLSTATEs after which the whole transaction is worth running again. */
const RETRYABLE = new Set(['40P01', '40001']);
/** Runs of one transaction before its error is given to the caller. */
const MAX_RUNS = 5;

/** Statement names by text: the same text always gets the same name, so each connection prepares it once. */
class StatementNames {
  readonly #names = new Map<string, string>();

  /** The statement's name, or undefined for one that is `plannedEachRun`. */
  nameOf(text: string): string | undefined {
    if (isPlannedEachRun(text)) return undefined;
    let name = this.#names.get(text);
    if (name === undefined) {
      name = `smppd_${this.#names.size + 1}`;
      this.#names.set(text, name);
    }
    return name;
  }
}

/** What a query runs on: a transaction's connection, or the pool for a single-statement read. */
export interface Queryable {
  rows<R>(text: string, params?: readonly unknown[]): Promise<R[]>;
  row<R>(text: string, params?: readonly unknown[]): Promise<R | undefined>;
  /** Runs a write; returns how many rows it touched. */
  run(text: string, params?: readonly unknown[]): Promise<number>;
}

abstract class Runner implements Queryable {
  constructor(protected readonly names: StatementNames) {}

  protected abstract query(config: pg.QueryConfig): Promise<pg.QueryResult>;

  protected config(text: string, params: readonly unknown[]): pg.QueryConfig {
    const name = this.names.nameOf(text);
    return name === undefined ? { text, values: [...params] } : { name, text, values: [...params] };
  }

  async rows<R>(text: string, params: readonly unknown[] = []): Promise<R[]> {
    const result = await this.query(this.config(text, params));
    return result.rows as R[];
  }

  async row<R>(text: string, params: readonly unknown[] = []): Promise<R | undefined> {
    return (await this.rows<R>(text, params))[0];
  }

  async run(text: string, params: readonly unknown[] = []): Promise<number> {
    const result = await this.query(this.config(text, params));
    return result.rowCount ?? 0;
  }
}

/**
 * One transaction. The writes of its status changes are gathered (`writes`) and sent in one
 * statement before the transaction's next statement and before COMMIT (`writes.ts`).
 */
export class Tx extends Runner {
  readonly #client: pg.PoolClient;
  readonly writes: PendingWrites;
  /**
   * Statements sent whose results nobody reads (BEGIN, a flush of the writes, `send`): the next
   * statement's result waits for them and fails with the first of their errors.
   */
  #unread: Array<Promise<unknown>> = [];
  /**
   * A sent statement failed: one of its values could not be made a parameter (pg finds that
   * before the server sees the statement, so the server's transaction goes on), or the server
   * answered with an error. COMMIT is not sent after it.
   */
  #sentFailed = false;
  /** The first statement that failed other than by the server's answer (`clientFailed`). */
  #clientError: unknown = undefined;

  constructor(client: pg.PoolClient, names: StatementNames, keepsRecords: boolean) {
    super(names);
    this.#client = client;
    this.writes = new PendingWrites(keepsRecords);
  }

  /** Sends a statement now; its error, if any, is the next statement's (or COMMIT's). */
  send(text: string, params: readonly unknown[] = []): void {
    if (this.writes.pending(false)) this.#flush(false);
    this.#sendUnread(this.config(text, params));
  }

  protected async query(config: pg.QueryConfig): Promise<pg.QueryResult> {
    if (this.writes.pending(false)) this.#flush(false);
    return this.#readAfterUnread(this.#client.query(config).catch((e: unknown) => {
      this.#noteFailure(e);
      throw e;
    }));
  }

  /**
   * A statement failed other than by the server's answer: a value pg could not send (pg then
   * counts the statement as prepared on this connection, though it is not), or the connection.
   * The connection is not given back to the pool after such a transaction.
   */
  get clientFailed(): boolean {
    return this.#clientError !== undefined;
  }

  #noteFailure(e: unknown): void {
    if (!(e instanceof pg.DatabaseError)) this.#clientError ??= e;
  }

  /** Sends the gathered writes now, batch counters included (before reading a batch this transaction has moved). */
  flush(): void {
    if (this.writes.pending(true)) this.#flush(true);
  }

  /** BEGIN, sent with the first statement. */
  begin(text: string): void {
    this.#sendUnread({ text });
  }

  /**
   * The last writes and COMMIT, together. Should a write fail, PostgreSQL ends the transaction at
   * COMMIT with a rollback, and the write's error is thrown.
   */
  async commit(): Promise<void> {
    this.flush();
    // pg reports some of its own failures on the next tick: they are in before COMMIT is sent.
    if (this.#unread.length > 0) await new Promise<void>((resolve) => process.nextTick(resolve));
    // A read that failed in pg (a value it could not send, the connection) left the server's
    // transaction going, as a sent one does: an operation that caught that error and went on would
    // commit without the statement. PostgreSQL ends a transaction after its own errors itself.
    if (this.#sentFailed || this.clientFailed) {
      await this.#readAfterUnread(Promise.resolve()); // throws the failed statement's error, if not read yet
      throw new Error('a statement of the transaction failed: not committed', { cause: this.#clientError });
    }
    const committed = await this.#readAfterUnread(this.#client.query('COMMIT'));
    // PostgreSQL ends a transaction in which a statement failed with a ROLLBACK, without an error.
    if (committed.command !== 'COMMIT') throw new Error(`the transaction ended with ${committed.command}, not COMMIT`);
  }

  /** Waits for every statement sent (a failed transaction's, before its ROLLBACK); never throws. */
  async settle(): Promise<void> {
    await Promise.allSettled(this.#unread.splice(0));
  }

  #flush(final: boolean): void {
    this.#sendUnread(this.config(FLUSH_SQL, this.writes.take(final)));
  }

  #sendUnread(config: pg.QueryConfig): void {
    // The callback form: pg calls it at once when a value cannot be made a parameter.
    const sent = new Promise<pg.QueryResult>((resolve, reject) => {
      this.#client.query(config, (err: Error | null, result: pg.QueryResult) => {
        if (err) {
          this.#sentFailed = true;
          this.#noteFailure(err);
          reject(err);
        } else {
          resolve(result);
        }
      });
    });
    // Handled here, read by the next statement: an error is never an unhandled rejection.
    sent.catch(() => undefined);
    this.#unread.push(sent);
  }

  async #readAfterUnread<R>(result: Promise<R>): Promise<R> {
    const earlier = this.#unread.splice(0);
    if (earlier.length === 0) return result;
    const settled = await Promise.allSettled([...earlier, result]);
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    return (settled[settled.length - 1] as PromiseFulfilledResult<R>).value;
  }
}

/** The pool: single statements run on it directly. */
class PoolRunner extends Runner {
  constructor(private readonly pool: pg.Pool, names: StatementNames) {
    super(names);
  }

  protected query(config: pg.QueryConfig): Promise<pg.QueryResult> {
    return this.pool.query(config);
  }
}

export interface DbStats {
  /** Transactions committed. */
  commits: number;
  /** Transactions run again after a deadlock or serialization failure. */
  retries: number;
}

export class Db {
  readonly #pool: pg.Pool;
  readonly #names = new StatementNames();
  readonly #direct: PoolRunner;
  readonly #keepsRecords: boolean;
  #commits = 0;
  #retries = 0;

  /** `keepsRecords`: whether a message that becomes final in a transaction queues its record (`message-records.ts`). */
  constructor(pool: pg.Pool, keepsRecords = false) {
    this.#pool = pool;
    this.#direct = new PoolRunner(pool, this.#names);
    this.#keepsRecords = keepsRecords;
  }

  get stats(): DbStats {
    return { commits: this.#commits, retries: this.#retries };
  }

  /** Single-statement reads (each statement sees every committed write). */
  get direct(): Queryable {
    return this.#direct;
  }

  /** Runs `fn` in one READ COMMITTED transaction; again from the start after a deadlock. */
  async transaction<T>(fn: (tx: Tx) => Promise<T>, what = 'a store write failed'): Promise<T> {
    for (let run = 1; ; run++) {
      try {
        return await this.#once(fn, 'BEGIN');
      } catch (e) {
        if (run < MAX_RUNS && RETRYABLE.has(sqlState(e) ?? '')) {
          this.#retries++;
          continue;
        }
        throw asStoreError(e, what);
      }
    }
  }

  /** One statement on the pool, in its own implicit transaction; again after a deadlock. */
  async statement<T>(fn: (db: Queryable) => Promise<T>, what = 'a store write failed'): Promise<T> {
    for (let run = 1; ; run++) {
      try {
        const value = await fn(this.#direct);
        this.#commits++;
        return value;
      } catch (e) {
        if (run < MAX_RUNS && RETRYABLE.has(sqlState(e) ?? '')) {
          this.#retries++;
          continue;
        }
        throw asStoreError(e, what);
      }
    }
  }

  /** Several statements that must see one snapshot: a read-only REPEATABLE READ transaction. */
  async read<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    try {
      return await this.#once(fn, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', false);
    } catch (e) {
      throw asStoreError(e, 'a store read failed');
    }
  }

  async #once<T>(fn: (tx: Tx) => Promise<T>, begin: string, count = true): Promise<T> {
    const client = await this.#pool.connect();
    let broken = false;
    const tx = new Tx(client, this.#names, this.#keepsRecords);
    try {
      tx.begin(begin);
      try {
        const value = await fn(tx);
        await tx.commit();
        if (count) this.#commits++;
        return value;
      } catch (e) {
        await tx.settle();
        await client.query('ROLLBACK').catch(() => { broken = true; });
        throw e;
      }
    } finally {
      client.release(broken || tx.clientFailed);
    }
  }
}

export function sqlState(e: unknown): string | undefined {
  return e instanceof pg.DatabaseError ? e.code : undefined;
}

/** `../store-error.ts`'s, with the SQLSTATE of a DatabaseError in the details. */
export function asStoreError(e: unknown, message: string): SmppdError {
  return storeError(e, message, { sqlState: sqlState(e) });
}
