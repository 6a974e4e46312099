/**
 * The scale-out benchmark's PostgreSQL floor against a real server: every message it writes ends
 * DELIVERED through the receipt index, its commit count is what its loop makes, and its schema is
 * gone afterwards.
 */
import pg from 'pg';
import { expect, it } from 'vitest';
import { BenchCleanup } from '../src/cleanup.js';
import { runStoreFloorCase } from '../src/floor-store.js';
import { describePg, PG_URL } from '../../test/integration/postgres/pg-store.js';

async function schemaExists(name: string): Promise<boolean> {
  const client = new pg.Client(PG_URL);
  await client.connect();
  try {
    return (await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [name])).rowCount === 1;
  } finally {
    await client.end();
  }
}

describePg('the PostgreSQL floor of the scale-out benchmark', () => {
  it('inserts, keys and delivers every message, counts its commits, and drops its schema', async () => {
    const cleanup = new BenchCleanup();
    // 2,050 messages, 100 a statement, 3 connections: 21 batches (the last of 50), each inserted and keyed in 2 commits, and each connection's last batch delivered alone.
    const r = await runStoreFloorCase({ name: 'floor', messages: 2_050, batch: 100, clients: 3, offeredRate: 8000 }, PG_URL!, cleanup);
    if ('error' in r) throw new Error(r.error);
    expect(r.delivered).toBe(2_050);
    expect(r.commitsPerMessage).toBe(Math.round(((21 * 2 + 3) / 2_050) * 1000) / 1000);
    // Found and read (null: no local server). Linux samples a process's CPU at each clock tick, so
    // the few tens of ms a case this small costs the server may read 0 on a busy machine.
    expect(r.cpuUsPerMessage.postgres).toBeGreaterThanOrEqual(0);
    expect(r.postgresPercentAtOffered).toBe(Math.round((r.cpuUsPerMessage.postgres! * 8000) / 10_000));
    expect(r.cleanupProblems).toEqual([]);
    expect(await schemaExists(r.schema)).toBe(false);
    expect(await cleanup.runAll()).toEqual([]);
  }, 60_000);

  it('reports a server it cannot reach as the case failing', async () => {
    const cleanup = new BenchCleanup();
    const r = await runStoreFloorCase({ name: 'floor', messages: 10, batch: 5, clients: 1, offeredRate: 8000 }, 'postgres://postgres@127.0.0.1:1/test', cleanup);
    expect(r).toMatchObject({ case: 'floor', error: expect.stringContaining('ECONNREFUSED'), cleanupProblems: [] });
    expect(await cleanup.runAll()).toEqual([]);
  });
});
