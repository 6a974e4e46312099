/** Helpers for tests of the configuration. */
import type { StoreConfig } from '../../src/config/schema.js';

/** The store section of a config that must be SQLite's. */
export function sqliteStore(c: { store: StoreConfig }): Extract<StoreConfig, { kind: 'sqlite' }> {
  if (c.store.kind !== 'sqlite') throw new Error(`expected a sqlite store, got ${c.store.kind}`);
  return c.store;
}
