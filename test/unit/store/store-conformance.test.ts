/**
 * The store conformance scenarios (test/support/store-conformance/) on SqliteStore: a fresh file per
 * test, inspected through a second, read-only connection; a restart is a close and an open of the file.
 */
import type Database from 'better-sqlite3';
import { describe } from 'vitest';
import { CLAIM_EVENTS_SQL } from '../../../src/store/sqlite/event-delivery.js';
import { storeFolder } from '../../support/sqlite-store.js';
import { WallClockAt, type StoreHarness } from '../../support/store-conformance/harness.js';
import { describeStoreConformance } from '../../support/store-conformance/store-conformance.js';

async function sqliteHarness(): Promise<StoreHarness> {
  const folder = storeFolder();
  const clock = new WallClockAt();
  let inspector: Database.Database | undefined;
  // Opened at the first look: the file exists once the first store has opened it.
  const inspect = () => (inspector ??= folder.inspect());
  return {
    clock,
    open: (options = {}) => folder.open({ clock, ...options }),
    // better-sqlite3 binds $1, $2, … by name: { 1: …, 2: … }.
    rows: async <R>(sql: string, params: unknown[] = []) => {
      const statement = inspect().prepare(sql);
      return (params.length === 0 ? statement.all() : statement.all(Object.fromEntries(params.map((p, i) => [i + 1, p])))) as R[];
    },
    claimEventsSql: CLAIM_EVENTS_SQL,
    dueEventsPlan: async (client, now) =>
      (inspect().prepare("EXPLAIN QUERY PLAN SELECT id FROM outbox INDEXED BY outbox_due WHERE client = ? AND state = 'pending' AND next_attempt_at <= ?")
        .all(client, now) as Array<{ detail: string }>).map((r) => r.detail).join(' '),
    close: () => folder.cleanup(),
  };
}

describe('SqliteStore', () => describeStoreConformance(sqliteHarness));
