/**
 * Helpers for tests of the SQLite store: a store on a real file in a fresh temporary folder,
 * message builders, and a second, read-only connection that looks at the file the way an
 * operator's sqlite3 shell would (to count outbox rows, read the raw receipts, the migrations).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SystemClock, type Clock } from '../../src/core/clock.js';
import type { NewMessage, StoredPartBody } from '../../src/store/intake.js';
import { SqliteStore, type SqliteStoreOptions } from '../../src/store/sqlite/sqlite-store.js';

export interface StoreFolder {
  dir: string;
  path: string;
  open(options?: Partial<Omit<SqliteStoreOptions, 'path'>>): Promise<SqliteStore>;
  /** A read-only connection to the same file; closed by `cleanup`. */
  inspect(): Database.Database;
  /** Closes every store and connection it opened and removes the folder. */
  cleanup(): Promise<void>;
}

export function storeFolder(): StoreFolder {
  const dir = mkdtempSync(join(tmpdir(), 'smppd-store-'));
  const path = join(dir, 'smppd.db');
  const stores: SqliteStore[] = [];
  const readers: Database.Database[] = [];
  return {
    dir,
    path,
    async open(options = {}) {
      const clock: Clock = options.clock ?? new SystemClock();
      const store = await SqliteStore.open({ ...options, clock, path });
      stores.push(store);
      return store;
    },
    inspect() {
      const db = new Database(path, { readonly: true, fileMustExist: true });
      readers.push(db);
      return db;
    },
    async cleanup() {
      for (const db of readers) if (db.open) db.close();
      for (const s of stores) await s.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function partBody(text = 'hello', over: Partial<StoredPartBody> = {}): StoredPartBody {
  return { dataCoding: 0, esmClass: 0, shortMessage: Buffer.from(text, 'latin1'), ...over };
}

/** A one-part message to `destination` on upstream 'up1' for client 'acme'; `parts` makes it longer. */
export function newMessage(id: string, over: Partial<NewMessage> & { partCount?: number } = {}): NewMessage {
  const { partCount = 1, ...rest } = over;
  return {
    id,
    client: 'acme',
    events: true,
    upstream: 'up1',
    route: null,
    source: 'ACME',
    destination: '971500000001',
    text: 'hello',
    messageType: 'TEXT',
    encoding: 'GSM-7',
    campaignName: null,
    registeredDelivery: 1,
    sourceTon: 5,
    sourceNpi: 0,
    destTon: 1,
    destNpi: 1,
    validityPeriod: '',
    expiresAt: null,
    notBefore: null,
    parts: Array.from({ length: partCount }, (_, i) =>
      partBody(`part ${i + 1}`, partCount > 1 ? { esmClass: 0x40, sar: { refNum: 7, total: partCount, seq: i + 1 } } : {})),
    ...rest,
  };
}
