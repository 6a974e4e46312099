/**
 * Prepared statements by their text, prepared once per connection: the hot path runs the same
 * few statements thousands of times a second, and parsing them each time would cost more than
 * running them.
 */
import type Database from 'better-sqlite3';

export class Sql {
  readonly #db: Database.Database;
  readonly #statements = new Map<string, Database.Statement>();

  constructor(db: Database.Database) {
    this.#db = db;
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

  #prepare(source: string): Database.Statement {
    let statement = this.#statements.get(source);
    if (!statement) {
      statement = this.#db.prepare(source);
      this.#statements.set(source, statement);
    }
    return statement;
  }
}
