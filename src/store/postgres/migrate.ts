/**
 * Applies the PostgreSQL store's migrations (`migrations.ts`) that the schema has not seen, in
 * order, in one transaction, under an advisory lock of the schema: several instances that start
 * at once apply each migration once (the others wait, then find it applied).
 */
import type pg from 'pg';
import { pendingMigrations, type Migration } from '../rules/migrations.js';
import { PG_MIGRATIONS, quoteIdent } from './migrations.js';

/** The key of the schema's migration lock: one per schema, so stores of other schemas do not wait. */
export const MIGRATION_LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtextextended('smppd.migrate:' || $1, 0))";

/**
 * Creates the schema when missing and applies the migrations it has not seen, in one transaction
 * on `client`, holding the schema's migration lock; returns the versions applied. `client`'s
 * search_path names the schema.
 */
export async function migrate(client: pg.ClientBase, schema: string, migrations: readonly Migration[] = PG_MIGRATIONS): Promise<number[]> {
  await client.query('BEGIN');
  try {
    await client.query(MIGRATION_LOCK_SQL, [schema]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    INTEGER PRIMARY KEY,
      name       TEXT    NOT NULL,
      applied_at BIGINT  NOT NULL
    )`);
    const { rows } = await client.query<{ v: number | null }>('SELECT MAX(version) AS v FROM schema_migrations');
    const pending = pendingMigrations(rows[0]?.v ?? 0, migrations);
    const applied: number[] = [];
    for (const m of pending) {
      await client.query(m.sql);
      // applied_at is the database's time: a note for operators, read by nothing.
      await client.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)", [m.version, m.name]);
      applied.push(m.version);
    }
    await client.query('COMMIT');
    return applied;
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  }
}
