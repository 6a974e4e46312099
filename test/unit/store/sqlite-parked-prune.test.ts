/**
 * A prune of the parked receipts takes the keys it deletes out of the in-memory parked-key index
 * (`parked-keys.ts`) instead of forgetting the index: under a receipt flood the parking is pruned
 * every tenth of its cap, and reading up to 100,000 keys back from the file each time cost more
 * than the prune.
 */
import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import { migrate } from '../../../src/store/sqlite/migrate.js';
import { applyReceipt, pruneParked } from '../../../src/store/sqlite/receipts.js';
import { Sql } from '../../../src/store/sqlite/sql.js';

let db: Database.Database | undefined;
afterEach(() => db?.close());

function parkedSql() {
  db = new Database(':memory:');
  migrate(db, 0);
  const sql = new Sql(db);
  let keyReads = 0;
  const all = sql.all.bind(sql);
  sql.all = <T>(source: string, ...params: unknown[]): T[] => {
    if (source.startsWith('SELECT upstream, key FROM parked_receipt_keys')) keyReads++;
    return all<T>(source, ...params);
  };
  const park = (upstream: string, key: string, receivedAt: number) =>
    expect(applyReceipt(sql, { upstream, keys: [key], status: 'DELIVERED', reason: null, raw: {}, receivedAt })).toEqual({ kind: 'parked' });
  return { sql, park, keyReads: () => keyReads };
}

it('takes the receipts it drops out of the parked-key index, without reading the keys again', () => {
  const { sql, park, keyReads } = parkedSql();
  for (let i = 0; i < 10; i++) park('up1', `k${i}`, i);
  park('up2', 'k0', 0);
  expect(sql.parked.mayHave(sql, 'up1', 'k0')).toBe(true);
  expect(keyReads()).toBe(1);

  // k0–k2 too old, k3–k4 past the newest 5.
  expect(pruneParked(sql, [{ upstream: 'up1', before: 3, max: 5 }, { upstream: 'up2', before: 0, max: 5 }], 0)).toEqual([
    { upstream: 'up1', reason: 'age', count: 3 }, { upstream: 'up1', reason: 'cap', count: 2 },
  ]);
  expect(Array.from({ length: 10 }, (_, i) => sql.parked.mayHave(sql, 'up1', `k${i}`))).toEqual([false, false, false, false, false, true, true, true, true, true]);
  expect(sql.parked.mayHave(sql, 'up2', 'k0')).toBe(true);
  expect(keyReads()).toBe(1);
});

it('counts the receipts of upstreams no longer configured by upstream, and drops them from the index', () => {
  const { sql, park } = parkedSql();
  for (let i = 0; i < 5; i++) park('gone', `g${i}`, i);
  for (let i = 0; i < 3; i++) park('gone2', `h${i}`, i);
  park('gone', 'young', 100);
  expect(sql.parked.mayHave(sql, 'gone', 'g0')).toBe(true);
  expect(pruneParked(sql, [], 50)).toEqual([{ upstream: 'gone', reason: 'age', count: 5 }, { upstream: 'gone2', reason: 'age', count: 3 }]);
  expect(sql.parked.mayHave(sql, 'gone', 'g0')).toBe(false);
  expect(sql.parked.mayHave(sql, 'gone', 'young')).toBe(true);
});
