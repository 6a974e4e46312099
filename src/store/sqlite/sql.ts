/**
 * The store's connection as its functions use it: prepared statements by their text, prepared
 * once (the hot path runs the same few statements thousands of times a second, and parsing them
 * each time would cost more than running them), and what the connection keeps in memory of the
 * rows it writes (`statuses`, `parked`): one process uses the file, so memory stays in step.
 */
import type Database from 'better-sqlite3';
import { ParkedKeys } from './parked-keys.js';
import { StatusCache } from './status-cache.js';

export interface SqlMemory {
  /** Messages kept in `statuses`; 0 keeps none. Default `DEFAULT_STATUS_CACHE_SIZE`. */
  statusCacheSize?: number;
  /** Parked keys counted in `parked`; 0 counts none. Default `DEFAULT_PARKED_KEYS_LIMIT`. */
  parkedKeysLimit?: number;
  /** Over that limit, submit outcomes between two counts of the parked keys. Default `DEFAULT_PARKED_RECOUNT_EVERY`. */
  parkedKeysRecountEvery?: number;
}

export class Sql {
  readonly #db: Database.Database;
  readonly #statements = new Map<string, Database.Statement>();
  readonly #rawStatements = new Map<string, Database.Statement>();
  /** The status rows of messages in flight. */
  readonly statuses: StatusCache;
  /** Which keys have parked receipts. */
  readonly parked: ParkedKeys;
  /** Whether a message that becomes final queues its record (`message-records.ts`). */
  readonly records: boolean;

  constructor(db: Database.Database, memory: SqlMemory = {}, records = false) {
    this.#db = db;
    this.records = records;
    this.statuses = new StatusCache(memory.statusCacheSize);
    this.parked = new ParkedKeys(memory.parkedKeysLimit, memory.parkedKeysRecountEvery);
  }

  get<T>(source: string, ...params: unknown[]): T | undefined {
    return this.#prepare(source).get(...params) as T | undefined;
  }

  all<T>(source: string, ...params: unknown[]): T[] {
    return this.#prepare(source).all(...params) as T[];
  }

  run(source: string, ...params: unknown[]): Database.RunResult {
    return this.#prepare(source).run(...params);
  }

  /**
   * Rows as arrays of their columns, in the statement's order: for a hot read of many columns,
   * where better-sqlite3 takes about twice as long to make each row an object as to read it.
   */
  rows<T extends readonly unknown[]>(source: string, ...params: unknown[]): T[] {
    let statement = this.#rawStatements.get(source);
    if (!statement) {
      statement = this.#db.prepare(source).raw(true);
      this.#rawStatements.set(source, statement);
    }
    return statement.all(...params) as T[];
  }

  /** A transaction rolled back: what memory holds of the rows may be what it undid. */
  rolledBack(): void {
    this.statuses.clear();
    this.parked.invalidate();
  }

  #prepare(source: string): Database.Statement {
    let statement = this.#statements.get(source);
    if (!statement) {
      statement = this.#db.prepare(source);
      this.#statements.set(source, statement);
    }
    return statement;
  }
}
