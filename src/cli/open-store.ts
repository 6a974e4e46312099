/** The store the configuration names, opened for the daemon. */
import type { Clock } from '../core/clock.js';
import type { SmppdError } from '../core/errors.js';
import type { Log } from '../core/log.js';
import type { StoreConfig } from '../config/schema.js';
import type { Store } from '../store/store.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { SqliteWorkerStore } from '../store/sqlite/worker-store.js';

/** The configured store, open. A PostgreSQL store is for several instances sharing one queue. */
export async function openStore(config: StoreConfig, records: boolean, clock: Clock, log: Log, onFatal: (e: SmppdError) => void): Promise<Store> {
  if (config.kind === 'postgres') {
    const { PostgresStore } = await import('../store/postgres/postgres-store.js');
    const store = await PostgresStore.open({ url: config.url, schema: config.schema, instanceId: config.instanceId, leaseMs: config.leaseSeconds * 1000, records, clock });
    // Never the URL: it holds the password.
    log.info({ event: 'store_open', kind: 'postgres', schema: config.schema, instanceId: config.instanceId, records }, 'store open');
    return store;
  }
  const { path, fsync, thread } = config;
  const store = thread === 'worker'
    ? await SqliteWorkerStore.open({ path, fsync, records }, { onFatal })
    : await SqliteStore.open({ path, fsync, records, clock });
  log.info({ event: 'store_open', kind: 'sqlite', path, fsync, thread, records }, 'store open');
  return store;
}
