/** Helpers for tests of the configuration. */
import type { StoreConfig } from '../../src/config/schema.js';
import { isSmppdError } from '../../src/core/errors.js';

/** The store section of a config that must be SQLite's. */
export function sqliteStore(c: { store: StoreConfig }): Extract<StoreConfig, { kind: 'sqlite' }> {
  if (c.store.kind !== 'sqlite') throw new Error(`expected a sqlite store, got ${c.store.kind}`);
  return c.store;
}

/** The CONFIG_INVALID message `load` is refused with; fails the test when it loads or fails otherwise. */
export async function configRefusal(load: () => Promise<unknown>): Promise<string> {
  try {
    await load();
  } catch (e) {
    if (isSmppdError(e, 'CONFIG_INVALID')) return e.message;
    throw e;
  }
  throw new Error('expected the config to be refused');
}
