export { PostgresStore, type PostgresStoreOptions } from './postgres-store.js';
export type { DbStats } from './db.js';
