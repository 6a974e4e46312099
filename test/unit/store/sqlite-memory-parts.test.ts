/**
 * The two memories of the SQLite store on their own: the parked keys' counts leave "too many"
 * once the parking has drained (a store must not look in the parking for every outcome until
 * restart), and the status cache keeps at most its capacity, dropping the oldest put.
 */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate } from '../../../src/store/sqlite/migrate.js';
import { ParkedKeys } from '../../../src/store/sqlite/parked-keys.js';
import { Sql } from '../../../src/store/sqlite/sql.js';
import { StatusCache } from '../../../src/store/sqlite/status-cache.js';
import type { MessageState } from '../../../src/store/rows.js';

describe('ParkedKeys', () => {
  let db: Database.Database | undefined;
  afterEach(() => db?.close());

  function parking(): { sql: Sql; park: (key: string) => number; unpark: (id: number) => void } {
    db = new Database(':memory:');
    migrate(db, 0);
    const sql = new Sql(db);
    return {
      sql,
      park: (key) => {
        const id = Number(db!.prepare("INSERT INTO parked_receipts (upstream, keys, raw, received_at) VALUES ('up', '[]', '{}', 0)").run().lastInsertRowid);
        db!.prepare("INSERT INTO parked_receipt_keys (parked_id, upstream, key) VALUES (?, 'up', ?)").run(id, key);
        return id;
      },
      unpark: (id) => void db!.prepare('DELETE FROM parked_receipts WHERE id = ?').run(id),
    };
  }

  it('counts keys read from the file and those parked and unparked after', () => {
    const { sql, park } = parking();
    park('a');
    const keys = new ParkedKeys(10, 5);
    expect(keys.mayHave(sql, 'up', 'a')).toBe(true);
    expect(keys.mayHave(sql, 'up', 'b')).toBe(false);
    keys.parked('up', ['b']);
    expect(keys.mayHave(sql, 'up', 'b')).toBe(true);
    keys.unparked('up', ['b']);
    expect(keys.mayHave(sql, 'up', 'b')).toBe(false);
    expect(keys.mayHave(sql, 'other', 'a')).toBe(false);
  });

  it('over its limit answers "may have" to every key, and counts again once the parking has drained', () => {
    const { sql, park, unpark } = parking();
    const ids = ['a', 'b', 'c'].map(park);
    const keys = new ParkedKeys(2, 5);
    expect(keys.mayHave(sql, 'up', 'zzz')).toBe(true); // three parked, limit two
    keys.parked('up', ['d']);
    for (const id of ids) unpark(id);
    // Still over until the next count: every fifth look counts the parked keys in the file.
    const answers = Array.from({ length: 5 }, () => keys.mayHave(sql, 'up', 'zzz'));
    expect(answers.slice(0, 4)).toEqual([true, true, true, true]);
    expect(answers[4]).toBe(false);
    expect(keys.mayHave(sql, 'up', 'zzz')).toBe(false);
  });

  it('goes over its limit when parking pushes it past, counting a key parked twice twice', () => {
    const { sql } = parking();
    const keys = new ParkedKeys(2, 1_000);
    expect(keys.mayHave(sql, 'up', 'x')).toBe(false);
    keys.parked('up', ['a']);
    keys.parked('up', ['a']);
    expect(keys.mayHave(sql, 'up', 'x')).toBe(false);
    keys.parked('up', ['b']);
    expect(keys.mayHave(sql, 'up', 'x')).toBe(true);
  });
});

describe('StatusCache', () => {
  const state = (id: string): MessageState => ({
    message: { id, client: 'c', upstream: 'up', batch_id: null, destination: '1', status: 'SUBMITTED', reason: null, processed: 0, events: 0, updated_at: 0 },
    parts: [],
  });

  it('keeps at most its capacity, dropping the oldest put, and counts what it answered', () => {
    const cache = new StatusCache(2);
    cache.put(state('a'));
    cache.put(state('b'));
    cache.put(state('a')); // put again: now the newest
    cache.put(state('c'));
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.message.id).toBe('a');
    expect(cache.get('c')?.message.id).toBe('c');
    expect(cache.lookups).toEqual({ hits: 2, misses: 1 });
  });

  it('with no capacity keeps nothing', () => {
    const cache = new StatusCache(0);
    cache.put(state('a'));
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });
});
