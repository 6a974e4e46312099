/**
 * What `PostgresStore.open` does before the store exists: the schema brought up to date (on a
 * connection of its own, under the migration lock), the instance lock taken, the pool opened.
 */
import pg from 'pg';
import { asStoreError, sessionOptions, TYPES } from './db.js';
import { InstanceLock, lockSpaces } from './locks.js';
import { migrate } from './migrate.js';
import { checkedOptions, type PostgresStoreOptions } from './postgres-store-options.js';
import type { InstanceContext } from './submit.js';

export interface ConnectedStore {
  pool: pg.Pool;
  lock: InstanceLock;
  ctx: InstanceContext;
  leaseMs: number;
  schema: string;
}

/** Connects, migrates, takes the instance lock and opens the pool; on a failure, lets go of what it took. */
export async function connectStore(options: PostgresStoreOptions): Promise<ConnectedStore> {
  const { schema, leaseMs, poolSize } = checkedOptions(options);
  // keepAlive: a connection cut without a FIN (a firewall, a host gone) is noticed by the OS, so
  // the instance lock goes with it and a query on it fails instead of waiting forever.
  const config: pg.ClientConfig = { connectionString: options.url, options: sessionOptions(schema), types: TYPES, keepAlive: true };
  const spaces = lockSpaces(schema);
  let lock: InstanceLock | undefined;
  try {
    const admin = new pg.Client(config);
    await admin.connect();
    try {
      await migrate(admin, schema);
    } finally {
      await admin.end().catch(() => undefined);
    }
    lock = await InstanceLock.acquire(config, spaces, options.instanceId, leaseMs);
    const pool = new pg.Pool({ ...config, max: poolSize, pipeline: true });
    // An idle connection that breaks is dropped by the pool; the next query opens another.
    pool.on('error', () => undefined);
    return { pool, lock, ctx: { instanceId: options.instanceId, spaces }, leaseMs, schema };
  } catch (e) {
    await lock?.release();
    throw asStoreError(e, `cannot set up the PostgreSQL store (schema ${schema})`);
  }
}
