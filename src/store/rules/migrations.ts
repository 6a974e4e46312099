/**
 * Which numbered migrations a store applies, decided once for both stores: those above the
 * version the database has, in order. Each store runs them in its own transaction and dialect.
 */
import { ErrorCode, SmppdError } from '../../core/errors.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * The migrations above `current`, by version. A database newer than every migration known here
 * (written by a later smppd) is refused: this one cannot know what its schema means.
 */
export function pendingMigrations<M extends Migration>(current: number, migrations: readonly M[]): M[] {
  const known = migrations.reduce((max, m) => Math.max(max, m.version), 0);
  if (current > known) {
    throw new SmppdError(ErrorCode.INTERNAL, `the store's schema is version ${current}; this smppd knows up to ${known}`, { current, known });
  }
  return migrations.filter((m) => m.version > current).sort((a, b) => a.version - b.version);
}
