import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { isSmppdError } from '../../../src/core/errors.js';
import { migrate } from '../../../src/store/sqlite/migrate.js';
import { MIGRATIONS } from '../../../src/store/sqlite/migrations.js';
import { newMessage, partBody, storeFolder, type StoreFolder } from '../../support/sqlite-store.js';

/** The newest version: the list may skip a number that another change holds, so not its length. */
const LATEST = Math.max(...MIGRATIONS.map((m) => m.version));

describe('SqliteStore migrations and settings', () => {
  let folder: StoreFolder;
  afterEach(async () => folder.cleanup());

  it('creates the schema at its latest version and records each migration in schema_migrations', async () => {
    folder = storeFolder();
    await folder.open();
    const db = folder.inspect();
    expect(db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all()).toEqual([
      { version: 1, name: 'initial schema' }, { version: 2, name: 'webhook delivery' }, { version: 3, name: 'blocked outbox events' },
      { version: 4, name: 'retention' }, { version: 5, name: 'inbound parts' }, { version: 6, name: 'parked receipts per upstream' },
      { version: 7, name: 'fair sharing between clients' }, { version: 8, name: 'inbound parts by concatenation scheme' },
      { version: 9, name: 'routes and failover' }, { version: 10, name: 'idempotency keys' },
      { version: 11, name: 'upstream suspensions and message search' },
      { version: 12, name: 'message records' }, { version: 13, name: 'event deliveries' }, { version: 14, name: 'regulatory ids' },
      { version: 15, name: 'spaced batches' }, { version: 16, name: 'recurring schedules' },
    ]);
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>)
      .map((t) => t.name);
    for (const t of ['batches', 'schedules', 'messages', 'parts', 'parked_receipts', 'parked_receipt_keys', 'receipts', 'inbound', 'outbox', 'inbound_parts', 'inbound_assembled', 'idempotency_keys', 'message_records', 'event_deliveries']) {
      expect(tables).toContain(t);
    }
  });

  it('opening the same file again applies nothing and keeps the data', async () => {
    folder = storeFolder();
    const first = await folder.open();
    await first.accept({ messages: [newMessage('a')], now: 1 });
    await first.close();
    const second = await folder.open();
    await second.close();
    const third = await folder.open();
    expect((await third.getMessage('a'))?.status).toBe('SUBMITTED');
    const db = folder.inspect();
    expect(db.prepare('SELECT COUNT(*) AS n, MAX(version) AS v FROM schema_migrations').get()).toEqual({ n: MIGRATIONS.length, v: LATEST });
  });

  it('refuses a file whose schema is newer than this smppd knows', async () => {
    folder = storeFolder();
    await (await folder.open()).close();
    const db = new Database(folder.path);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(LATEST + 1, 'future', 0);
    db.close();
    const refused = await folder.open().catch((e: unknown) => e);
    expect(isSmppdError(refused, 'INTERNAL')).toBe(true);
    expect((refused as Error).message).toMatch(new RegExp(`schema is version ${LATEST + 1}`));
  });

  it('version 2 on a file of version 1: old messages keep no events, the old outbox is emptied, the data stays', async () => {
    folder = storeFolder();
    const v1 = new Database(folder.path);
    migrate(v1, 1, MIGRATIONS.filter((m) => m.version === 1));
    v1.prepare(`INSERT INTO messages (id, client, upstream, source, destination, text, message_type, encoding, registered_delivery,
      source_ton, source_npi, dest_ton, dest_npi, validity_period, created_at, updated_at) VALUES ('old', 'acme', 'up1', 'A', '1', 't', 'TEXT', 'GSM-7', 1, 0, 0, 0, 0, '', 1, 1)`).run();
    v1.prepare("INSERT INTO outbox (kind, message_id, client, upstream, payload, created_at, next_attempt_at) VALUES ('status', 'old', 'acme', 'up1', '{}', 1, 1)").run();
    v1.close();
    const store = await folder.open();
    expect((await store.getMessage('old'))?.status).toBe('SUBMITTED');
    expect(await store.counts()).toMatchObject({ outbox: 0, deadEvents: 0 });
    expect(folder.inspect().prepare("SELECT events FROM messages WHERE id = 'old'").get()).toEqual({ events: 0 });
  });

  it('version 4 on a file of version 3: the inbound events in the outbox learn their inbound id, the data stays', async () => {
    folder = storeFolder();
    const v3 = new Database(folder.path);
    migrate(v3, 1, MIGRATIONS.filter((m) => m.version <= 3));
    v3.prepare(`INSERT INTO inbound (upstream, client, source, destination, text, data_coding, parts, received_at)
      VALUES ('up1', 'acme', '447700900123', '12345', 'STOP', 0, 1, 1)`).run();
    v3.prepare(`INSERT INTO outbox (kind, client, upstream, payload, created_at, queued_at, next_attempt_at, state)
      VALUES ('inbound', 'acme', 'up1', '{"type":"inbound","inboundId":1}', 1, 1, 1, 'dead')`).run();
    v3.close();
    const store = await folder.open();
    expect(folder.inspect().prepare('SELECT kind, inbound_id FROM outbox').all()).toEqual([{ kind: 'inbound', inbound_id: 1 }]);
    // Its dead event keeps the inbound message.
    expect(await store.pruneFinished(1_000, 10)).toEqual({ messages: 0, batches: 0, inbound: 0, next: null });
  });

  it('version 5 on a file of version 4: inbound messages stay, whole and cleanly decoded; long MOs wait in inbound_parts', async () => {
    folder = storeFolder();
    const v4 = new Database(folder.path);
    migrate(v4, 1, MIGRATIONS.filter((m) => m.version <= 4));
    v4.prepare(`INSERT INTO inbound (upstream, client, source, destination, text, data_coding, parts, received_at)
      VALUES ('up1', 'acme', '447700900123', '12345', 'STOP', 0, 1, 1)`).run();
    v4.close();
    const store = await folder.open();
    expect(folder.inspect().prepare('SELECT text, missing_parts, problems, raw FROM inbound').all())
      .toEqual([{ text: 'STOP', missing_parts: null, problems: null, raw: null }]);
    expect(await store.expireInboundParts(1_000, 10)).toEqual([]);
  });

  it('version 7 on a file of version 6: parts not yet done learn their message\'s client, queued ones are counted and claimed per client', async () => {
    folder = storeFolder();
    const v6 = new Database(folder.path);
    migrate(v6, 1, MIGRATIONS.filter((m) => m.version <= 6));
    const rows: Array<[string, string, 'queued' | 'inflight' | 'done']> = [['q1', 'acme', 'queued'], ['q2', 'globex', 'queued'], ['f1', 'acme', 'inflight'], ['d1', 'acme', 'done']];
    for (const [i, [id, client, state]] of rows.entries()) {
      v6.prepare(`INSERT INTO messages (id, client, upstream, source, destination, text, message_type, encoding, registered_delivery,
        source_ton, source_npi, dest_ton, dest_npi, validity_period, created_at, updated_at) VALUES (?, ?, 'up1', 'A', '447700900123', 't', 'TEXT', 'GSM-7', 1, 5, 0, 1, 1, '', 1, 1)`).run(id, client);
      v6.prepare(`INSERT INTO parts (message_id, part, message_seq, upstream, data_coding, esm_class, short_message, state, updated_at)
        VALUES (?, 1, ?, 'up1', 0, 0, x'6869', ?, 1)`).run(id, i + 1, state);
    }
    v6.close();
    const store = await folder.open();
    expect(folder.inspect().prepare('SELECT message_id, client FROM parts ORDER BY message_id').all()).toEqual([
      { message_id: 'd1', client: null }, { message_id: 'f1', client: 'acme' }, { message_id: 'q1', client: 'acme' }, { message_id: 'q2', client: 'globex' },
    ]);
    expect(await store.queueDepth()).toEqual({ queued: 2, byClient: [{ client: 'acme', queued: 1 }, { client: 'globex', queued: 1 }] });
    expect((await store.claim('up1', 10, { clients: [{ client: 'globex', limit: 1 }], others: 0 })).map((m) => [m.id, m.client])).toEqual([['q2', 'globex']]);
  });

  it('version 8 on a file of version 7: parts held keep waiting, taken as 8-bit UDH (16-bit past 255), and complete their message', async () => {
    folder = storeFolder();
    const v7 = new Database(folder.path);
    migrate(v7, 1, MIGRATIONS.filter((m) => m.version <= 7));
    for (const ref of [7, 300]) {
      v7.prepare(`INSERT INTO inbound_parts (upstream, source, destination, ref, total, seq, data_coding, body, udh_invalid, default_alphabet, client, events, received_at)
        VALUES ('up1', '447700900001', '12345', ?, 2, 1, 0, x'6869', 0, 'gsm7', 'acme', 1, 1)`).run(ref);
    }
    v7.prepare(`INSERT INTO inbound_assembled (upstream, source, destination, ref, total, digests, assembled_at)
      VALUES ('up1', '447700900001', '12345', 9, 2, zeroblob(32), 1)`).run();
    v7.close();
    const store = await folder.open();
    const db = folder.inspect();
    expect(db.prepare('SELECT scheme, ref FROM inbound_parts ORDER BY ref').all()).toEqual([{ scheme: 'udh8', ref: 7 }, { scheme: 'udh16', ref: 300 }]);
    expect(db.prepare('SELECT scheme, ref FROM inbound_assembled').all()).toEqual([{ scheme: 'udh8', ref: 9 }]);
    const second = {
      upstream: 'up1', client: 'acme', events: true, source: '447700900001', destination: '12345', scheme: 'udh8' as const, ref: 7, total: 2,
      piece: { seq: 2, dataCoding: 0, body: Buffer.from('ya'), udhInvalid: false }, defaultAlphabet: 'gsm7' as const, receivedAt: 2,
    };
    expect(await store.recordInboundPart(second)).toMatchObject({ kind: 'stored', parts: 2 });
    expect(db.prepare('SELECT text FROM inbound').all()).toEqual([{ text: 'hiya' }]);
  });

  it('version 9 on a file of version 8: messages from before have no route, and those still queued can move', async () => {
    folder = storeFolder();
    const v8 = new Database(folder.path);
    migrate(v8, 1, MIGRATIONS.filter((m) => m.version <= 8));
    const rows: Array<[string, 'queued' | 'inflight']> = [['q1', 'queued'], ['f1', 'inflight']];
    for (const [i, [id, state]] of rows.entries()) {
      v8.prepare(`INSERT INTO messages (id, client, upstream, source, destination, text, message_type, encoding, registered_delivery,
        source_ton, source_npi, dest_ton, dest_npi, validity_period, created_at, updated_at) VALUES (?, 'acme', 'up1', 'A', '447700900123', 't', 'TEXT', 'GSM-7', 1, 5, 0, 1, 1, '', 1, 1)`).run(id);
      v8.prepare(`INSERT INTO parts (message_id, part, message_seq, upstream, client, data_coding, esm_class, short_message, state, updated_at)
        VALUES (?, 1, ?, 'up1', 'acme', 0, 0, x'6869', ?, 1)`).run(id, i + 1, state);
    }
    v8.close();
    const store = await folder.open();
    expect((await store.getMessage('q1'))?.route).toBeNull();
    expect((await store.movable('up1', 10, 2)).map((m) => [m.id, m.route])).toEqual([['q1', null]]);
    const moved = { id: 'q1', from: 'up1', upstream: 'up2', encoding: 'GSM-7' as const, registeredDelivery: 1, sourceTon: 5, sourceNpi: 0, parts: [partBody('hi')] };
    expect(await store.move([moved], 2)).toEqual(['q1']);
    expect((await store.claim('up2', 10, 10)).map((m) => m.id)).toEqual(['q1']);
  });

  it('runs in WAL mode with foreign keys, synchronous NORMAL by default and FULL with fsync', async () => {
    folder = storeFolder();
    const normal = await folder.open();
    expect(normal.settings()).toEqual({ journalMode: 'wal', synchronous: 'NORMAL', foreignKeys: true, busyTimeoutMs: 5000 });
    await normal.close();
    const full = await folder.open({ fsync: true, busyTimeoutMs: 250 });
    expect(full.settings()).toMatchObject({ journalMode: 'wal', synchronous: 'FULL', busyTimeoutMs: 250 });
  });
});
