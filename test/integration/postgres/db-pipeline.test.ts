/**
 * The store's transactions on pipelined connections (`db.ts`): statements whose results nothing
 * reads go out without waiting, and their errors still fail the transaction, at the next read or
 * at COMMIT, with nothing of it committed.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Db, sessionOptions, TYPES } from '../../../src/store/postgres/db.js';
import { describePg, PG_URL } from './pg-store.js';

describePg('PostgreSQL store transactions, pipelined', () => {
  let schema: string;
  let admin: pg.Client;
  let pool: pg.Pool;
  let db: Db;

  beforeEach(async () => {
    schema = `smppd_t_${randomBytes(6).toString('hex')}`;
    admin = new pg.Client({ connectionString: PG_URL, options: sessionOptions(schema), types: TYPES });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.query('CREATE TABLE t (id int PRIMARY KEY, v text)');
    pool = new pg.Pool({ connectionString: PG_URL, options: sessionOptions(schema), types: TYPES, max: 2, pipeline: true });
    db = new Db(pool);
  });

  afterEach(async () => {
    await pool.end();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  const ids = async (): Promise<number[]> => (await admin.query<{ id: number }>('SELECT id FROM t ORDER BY id')).rows.map((r) => r.id);

  it('commits what was sent without being read, and the read after a send sees it', async () => {
    const seen = await db.transaction(async (tx) => {
      tx.send('INSERT INTO t VALUES (1, $1)', ['a']);
      tx.send('INSERT INTO t VALUES (2, $1)', ['b']);
      const rows = await tx.rows<{ id: number }>('SELECT id FROM t ORDER BY id');
      tx.send('INSERT INTO t VALUES (3, $1)', ['c']);
      return rows.map((r) => r.id);
    });
    expect(seen).toEqual([1, 2]);
    expect(await ids()).toEqual([1, 2, 3]);
  });

  it("a sent statement's error is the next read's, and the transaction commits nothing", async () => {
    const failed = db.transaction(async (tx) => {
      tx.send('INSERT INTO t VALUES (1, $1)', ['a']);
      tx.send('INSERT INTO t VALUES (1, $1)', ['again']);
      await tx.rows('SELECT id FROM t');
      throw new Error('not reached: the read fails');
    });
    await expect(failed).rejects.toMatchObject({ details: { sqlState: '23505' } });
    expect(await ids()).toEqual([]);
    // The connection went back to the pool out of the transaction: the next one works.
    await db.transaction(async (tx) => { tx.send('INSERT INTO t VALUES (7, $1)', ['ok']); });
    expect(await ids()).toEqual([7]);
  });

  it("the last statement's error fails the COMMIT sent with it: the rows before it are rolled back", async () => {
    const failed = db.transaction(async (tx) => {
      await tx.run('INSERT INTO t VALUES (1, $1)', ['a']);
      tx.send('INSERT INTO t VALUES (1, $1)', ['again']);
    });
    await expect(failed).rejects.toMatchObject({ details: { sqlState: '23505' } });
    expect(await ids()).toEqual([]);
  });

  it('a value pg cannot send fails the transaction before COMMIT goes out: nothing of it is committed', async () => {
    // pg finds this before the server sees the statement, so the server's transaction is not aborted.
    const unsendable = { toPostgres: () => { throw new Error('not a parameter'); } };
    const failed = db.transaction(async (tx) => {
      await tx.run('INSERT INTO t VALUES (1, $1)', ['a']);
      tx.send('INSERT INTO t VALUES ($1, $2)', [2, unsendable]);
    });
    await expect(failed).rejects.toThrow('not a parameter');
    expect(await ids()).toEqual([]);
    // pg counts that statement as prepared on its connection, though it never was: that
    // connection is dropped, and the statement runs on the next ones.
    for (const id of [2, 3, 4]) await db.transaction(async (tx) => { tx.send('INSERT INTO t VALUES ($1, $2)', [id, 'b']); });
    expect(await ids()).toEqual([2, 3, 4]);
  });

  it("an operation that swallows a statement's error commits nothing: PostgreSQL's ROLLBACK at COMMIT is an error", async () => {
    const failed = db.transaction(async (tx) => {
      await tx.run('INSERT INTO t VALUES (1, $1)', ['a']);
      await tx.run('INSERT INTO t VALUES (1, $1)', ['again']).catch(() => 0);
    });
    await expect(failed).rejects.toThrow('ROLLBACK, not COMMIT');
    expect(await ids()).toEqual([]);
  });

  it("an operation that swallows a read's failure in pg (a value it cannot send) commits nothing either", async () => {
    // The server never saw the failed statement, so its transaction is not aborted and would commit.
    const unsendable = { toPostgres: () => { throw new Error('not a parameter'); } };
    const failed = db.transaction(async (tx) => {
      await tx.run('INSERT INTO t VALUES (1, $1)', ['a']);
      await tx.run('INSERT INTO t VALUES ($1, $2)', [2, unsendable]).catch(() => 0);
      await tx.run('INSERT INTO t VALUES (3, $1)', ['c']);
    });
    await expect(failed).rejects.toThrow('not committed');
    // The error the operation swallowed is kept as the cause (the store error wraps the one thrown).
    const error = (await failed.then(() => undefined, (e: unknown) => e)) as { cause?: { cause?: Error } } | undefined;
    expect(error?.cause?.cause?.message).toBe('not a parameter');
    expect(await ids()).toEqual([]);
  });

  it('an operation that throws after a send rolls back, and the send fails no one later', async () => {
    const failed = db.transaction(async (tx) => {
      tx.send('INSERT INTO t VALUES (1, $1)', ['a']);
      tx.send('INSERT INTO t VALUES (1, $1)', ['again']);
      throw new Error('the operation gave up');
    });
    await expect(failed).rejects.toThrow('the operation gave up');
    expect(await ids()).toEqual([]);
  });

  it('a read sent right behind a lock sees what the lock waited for (its snapshot is taken after the lock)', async () => {
    // A key of this test's own: other test files take advisory locks on the same database.
    const key = randomBytes(4).readUInt32BE() + 1;
    const holder = await pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock($1::bigint)', [key]);
      await holder.query("INSERT INTO t VALUES (5, 'written under the lock')");
      const reading = db.transaction(async (tx) => {
        tx.send('SELECT pg_advisory_xact_lock($1::bigint)', [key]);
        return (await tx.rows<{ id: number }>('SELECT id FROM t')).map((r) => r.id);
      });
      // The reader is waiting on the lock, its read already sent behind it.
      await waitFor(async () => (await admin.query(
        "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND classid = 0 AND objid = $1::bigint::oid AND objsubid = 1 AND NOT granted", [key],
      )).rowCount === 1);
      await holder.query('COMMIT');
      expect(await reading).toEqual([5]);
    } finally {
      holder.release();
    }
  });
});

async function waitFor(condition: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('condition not met in 2 s');
}
