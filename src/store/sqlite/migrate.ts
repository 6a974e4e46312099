/**
 * Applies the SQLite store's migrations (`migrations.ts`) that the file has not seen, in order, in
 * one transaction at open, and records each in `schema_migrations`: a crash half-way leaves the
 * file as it was.
 */
import type Database from 'better-sqlite3';
import { pendingMigrations, type Migration } from '../rules/migrations.js';
import { MIGRATIONS } from './migrations.js';

/** Applies the migrations the file has not seen, in one transaction; returns the versions applied. */
export function migrate(db: Database.Database, now: number, migrations: readonly Migration[] = MIGRATIONS): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    applied_at INTEGER NOT NULL
  )`);
  const apply = db.transaction((): number[] => {
    const row = db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null };
    const pending = pendingMigrations(row.v ?? 0, migrations);
    const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    const applied: number[] = [];
    for (const m of pending) {
      db.exec(m.sql);
      record.run(m.version, m.name, now);
      applied.push(m.version);
    }
    return applied;
  });
  return apply.immediate();
}
