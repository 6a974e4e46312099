import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { isSmppdError } from '../../../src/core/errors.js';
import { migrate } from '../../../src/store/postgres/migrate.js';
import { PG_MIGRATIONS } from '../../../src/store/postgres/migrations.js';
import { newMessage, partBody } from '../../support/sqlite-store.js';
import { describePg, PG_URL, pgSchema, type PgSchema } from './pg-store.js';

/** Applies the migrations up to `version` to the schema, as an smppd of that version would. */
async function migrateTo(schema: PgSchema, version: number): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema.name}` });
  await client.connect();
  try {
    await migrate(client, schema.name, PG_MIGRATIONS.filter((m) => m.version <= version));
  } finally {
    await client.end();
  }
}

/** A message 'kept', SUBMITTED, written as any version's smppd would (the columns of version 1). */
async function insertKept(schema: PgSchema): Promise<void> {
  await schema.sql(`INSERT INTO messages (id, client, upstream, source, destination, text, message_type, encoding, registered_delivery,
      source_ton, source_npi, dest_ton, dest_npi, validity_period, created_at, updated_at)
    VALUES ('kept', 'acme', 'up1', 'Acme', '+44', 'hi', 'TEXT', 'GSM-7', 1, 5, 0, 1, 1, '', 1, 1)`);
}

function fillFactors(schema: PgSchema): Promise<Array<{ relname: string; reloptions: string[] }>> {
  return schema.sql("SELECT relname, reloptions FROM pg_class WHERE relnamespace = $1::regnamespace AND relname IN ('messages', 'parts') ORDER BY relname", [schema.name]);
}

/** The newest version: the list may skip a number that another change holds, so not its length. */
const LATEST = Math.max(...PG_MIGRATIONS.map((m) => m.version));

describePg('PostgresStore migrations and instances', () => {
  let schema: PgSchema | undefined;
  afterEach(async () => {
    await schema?.cleanup();
    schema = undefined;
  });

  it('creates the schema at its latest version and records each migration in schema_migrations', async () => {
    schema = await pgSchema();
    await schema.open();
    expect(await schema.sql('SELECT version, name FROM schema_migrations ORDER BY version'))
      .toEqual([{ version: 1, name: 'initial schema' }, { version: 2, name: 'retention' }, { version: 3, name: 'hot-path writes' },
        { version: 4, name: 'message updates in place' }, { version: 5, name: 'inbound parts' },
        { version: 6, name: 'parked receipts per upstream' }, { version: 7, name: 'fair sharing between clients' },
        { version: 8, name: 'inbound parts by concatenation scheme' }, { version: 9, name: 'routes and failover' },
        { version: 10, name: 'idempotency keys' }, { version: 11, name: 'upstream suspensions and message search' },
        { version: 12, name: 'message records' }, { version: 13, name: 'event deliveries' }, { version: 14, name: 'regulatory ids' },
        { version: 15, name: 'spaced batches' }, { version: 16, name: 'recurring schedules' }]);
    const tables = (await schema.sql<{ table_name: string }>(
      'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name', [schema.name])).map((t) => t.table_name);
    for (const t of ['batches', 'schedules', 'messages', 'parts', 'parked_receipts', 'parked_receipt_keys', 'receipts', 'inbound', 'outbox', 'inbound_parts', 'inbound_assembled', 'message_records', 'event_deliveries']) {
      expect(tables).toContain(t);
    }
  });

  it('opening the same schema again applies nothing and keeps the data', async () => {
    schema = await pgSchema();
    const first = await schema.open();
    await first.accept({ messages: [newMessage('a')], now: 1 });
    await first.close();
    await (await schema.open()).close();
    const third = await schema.open();
    expect((await third.getMessage('a'))?.status).toBe('SUBMITTED');
    expect(await schema.sql('SELECT COUNT(*) AS n, MAX(version) AS v FROM schema_migrations')).toEqual([{ n: PG_MIGRATIONS.length, v: LATEST }]);
  });

  it('version 2 on a schema of version 1: the inbound events in the outbox learn their inbound id, the data stays', async () => {
    schema = await pgSchema();
    await migrateTo(schema, 1);
    await schema.sql(`INSERT INTO inbound (upstream, client, source, destination, text, data_coding, parts, received_at)
      VALUES ('up1', 'acme', '447700900123', '12345', 'STOP', 0, 1, 1)`);
    await schema.sql(`INSERT INTO outbox (kind, client, upstream, payload, created_at, queued_at, next_attempt_at, state)
      VALUES ('inbound', 'acme', 'up1', '{"type":"inbound","inboundId":1}', 1, 1, 1, 'dead')`);
    const store = await schema.open();
    expect(await schema.sql('SELECT kind, inbound_id FROM outbox')).toEqual([{ kind: 'inbound', inbound_id: 1 }]);
    // Its dead event keeps the inbound message.
    expect(await store.pruneFinished(1_000, 10)).toEqual({ messages: 0, batches: 0, inbound: 0, next: null });
  });

  it('version 3 on a schema of version 2: parts and receipts no longer check their message, new pages keep room for updates, the data stays', async () => {
    schema = await pgSchema();
    await migrateTo(schema, 2);
    const foreignKeys = () => schema!.sql<{ conname: string }>(
      "SELECT conname FROM pg_constraint WHERE contype = 'f' AND connamespace = $1::regnamespace ORDER BY conname", [schema!.name]);
    expect((await foreignKeys()).map((c) => c.conname)).toEqual(
      ['messages_batch_id_fkey', 'parked_receipt_keys_parked_id_fkey', 'parts_message_id_fkey', 'receipts_message_id_fkey', 'schedules_batch_id_fkey']);
    await insertKept(schema);
    await migrateTo(schema, 3);
    expect((await foreignKeys()).map((c) => c.conname)).toEqual(['messages_batch_id_fkey', 'parked_receipt_keys_parked_id_fkey', 'schedules_batch_id_fkey']);
    expect(await fillFactors(schema)).toEqual([{ relname: 'messages', reloptions: ['fillfactor=70'] }, { relname: 'parts', reloptions: ['fillfactor=70'] }]);
    expect((await (await schema.open()).getMessage('kept'))?.status).toBe('SUBMITTED');
  });

  it('version 4 on a schema of version 3: new pages of messages keep room for a new version of every row, the data stays', async () => {
    schema = await pgSchema();
    await migrateTo(schema, 3);
    await insertKept(schema);
    const store = await schema.open();
    expect(await fillFactors(schema)).toEqual([{ relname: 'messages', reloptions: ['fillfactor=50'] }, { relname: 'parts', reloptions: ['fillfactor=70'] }]);
    expect((await store.getMessage('kept'))?.status).toBe('SUBMITTED');
  });

  it('version 5 on a schema of version 4: inbound messages stay, whole and cleanly decoded; long MOs wait in inbound_parts', async () => {
    schema = await pgSchema();
    await migrateTo(schema, 4);
    await schema.sql(`INSERT INTO inbound (upstream, client, source, destination, text, data_coding, parts, received_at)
      VALUES ('up1', 'acme', '447700900123', '12345', 'STOP', 0, 1, 1)`);
    const store = await schema.open();
    expect(await schema.sql('SELECT text, missing_parts, problems, raw FROM inbound')).toEqual([{ text: 'STOP', missing_parts: null, problems: null, raw: null }]);
    expect(await store.expireInboundParts(1_000, 10)).toEqual([]);
  });

  it('version 7 on a schema of version 6: parts not yet done learn their message\'s client, queued ones are counted and claimed per client', async () => {
    schema = await pgSchema();
    await migrateTo(schema, 6);
    const rows: Array<[string, string, 'queued' | 'inflight' | 'done']> = [['q1', 'acme', 'queued'], ['q2', 'globex', 'queued'], ['f1', 'acme', 'inflight'], ['d1', 'acme', 'done']];
    for (const [i, [id, client, state]] of rows.entries()) {
      await schema.sql(`INSERT INTO messages (id, client, upstream, source, destination, text, message_type, encoding, registered_delivery,
          source_ton, source_npi, dest_ton, dest_npi, validity_period, created_at, updated_at)
        VALUES ($1, $2, 'up1', 'Acme', '447700900123', 'hi', 'TEXT', 'GSM-7', 1, 5, 0, 1, 1, '', 1, 1)`, [id, client]);
      await schema.sql(`INSERT INTO parts (message_id, part, message_seq, upstream, data_coding, esm_class, short_message, state, updated_at)
        VALUES ($1, 1, $2, 'up1', 0, 0, '\\x6869'::bytea, $3, 1)`, [id, i + 1, state]);
    }
    const store = await schema.open();
    expect(await schema.sql('SELECT message_id, client FROM parts ORDER BY message_id')).toEqual([
      { message_id: 'd1', client: null }, { message_id: 'f1', client: 'acme' }, { message_id: 'q1', client: 'acme' }, { message_id: 'q2', client: 'globex' },
    ]);
    expect((await store.queueDepth()).byClient.sort((a, b) => a.client.localeCompare(b.client)))
      .toEqual([{ client: 'acme', queued: 1 }, { client: 'globex', queued: 1 }]);
    expect((await store.claim('up1', 10, { clients: [{ client: 'globex', limit: 1 }], others: 0 })).map((m) => [m.id, m.client])).toEqual([['q2', 'globex']]);
  });

  it('version 8 on a schema of version 7: parts held keep waiting, taken as 8-bit UDH (16-bit past 255), and complete their message', async () => {
    schema = await pgSchema();
    await migrateTo(schema, 7);
    for (const ref of [7, 300]) {
      await schema.sql(`INSERT INTO inbound_parts (upstream, source, destination, ref, total, seq, data_coding, body, udh_invalid, default_alphabet, client, events, received_at)
        VALUES ('up1', '447700900001', '12345', $1, 2, 1, 0, '\\x6869'::bytea, 0, 'gsm7', 'acme', 1, 1)`, [ref]);
    }
    await schema.sql(`INSERT INTO inbound_assembled (upstream, source, destination, ref, total, digests, assembled_at)
      VALUES ('up1', '447700900001', '12345', 9, 2, '\\x00'::bytea, 1)`);
    const store = await schema.open();
    expect(await schema.sql('SELECT scheme, ref FROM inbound_parts ORDER BY ref')).toEqual([{ scheme: 'udh8', ref: 7 }, { scheme: 'udh16', ref: 300 }]);
    expect(await schema.sql('SELECT scheme, ref FROM inbound_assembled')).toEqual([{ scheme: 'udh8', ref: 9 }]);
    const second = {
      upstream: 'up1', client: 'acme', events: true, source: '447700900001', destination: '12345', scheme: 'udh8' as const, ref: 7, total: 2,
      piece: { seq: 2, dataCoding: 0, body: Buffer.from('ya'), udhInvalid: false }, defaultAlphabet: 'gsm7' as const, receivedAt: 2,
    };
    expect(await store.recordInboundPart(second)).toMatchObject({ kind: 'stored', parts: 2 });
    expect(await schema.sql('SELECT text FROM inbound')).toEqual([{ text: 'hiya' }]);
  });

  it('version 9 on a schema of version 8: messages from before have no route, and those still queued can move', async () => {
    schema = await pgSchema();
    await migrateTo(schema, 8);
    const rows: Array<[string, 'queued' | 'inflight']> = [['q1', 'queued'], ['f1', 'inflight']];
    for (const [i, [id, state]] of rows.entries()) {
      await schema.sql(`INSERT INTO messages (id, client, upstream, source, destination, text, message_type, encoding, registered_delivery,
          source_ton, source_npi, dest_ton, dest_npi, validity_period, created_at, updated_at)
        VALUES ($1, 'acme', 'up1', 'Acme', '447700900123', 'hi', 'TEXT', 'GSM-7', 1, 5, 0, 1, 1, '', 1, 1)`, [id]);
      await schema.sql(`INSERT INTO parts (message_id, part, message_seq, upstream, client, data_coding, esm_class, short_message, state, updated_at)
        VALUES ($1, 1, $2, 'up1', 'acme', 0, 0, '\\x6869'::bytea, $3, 1)`, [id, i + 1, state]);
    }
    const store = await schema.open();
    expect((await store.getMessage('q1'))?.route).toBeNull();
    expect((await store.movable('up1', 10, 2)).map((m) => [m.id, m.route])).toEqual([['q1', null]]);
    const moved = { id: 'q1', from: 'up1', upstream: 'up2', encoding: 'GSM-7' as const, registeredDelivery: 1, sourceTon: 5, sourceNpi: 0, parts: [partBody('hi')] };
    expect(await store.move([moved], 2)).toEqual(['q1']);
    expect((await store.claim('up2', 10, 10)).map((m) => m.id)).toEqual(['q1']);
  });

  it('refuses a schema whose version is newer than this smppd knows', async () => {
    schema = await pgSchema();
    await (await schema.open()).close();
    await schema.sql('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, 0)', [LATEST + 1, 'future']);
    const refused = await schema.open().catch((e: unknown) => e);
    expect(isSmppdError(refused, 'INTERNAL')).toBe(true);
    expect((refused as Error).message).toMatch(new RegExp(`schema is version ${LATEST + 1}`));
  });

  it('instances that start at once on a new schema apply each migration once', async () => {
    schema = await pgSchema();
    const s = schema;
    const stores = await Promise.all(['a', 'b', 'c', 'd'].map((id) => s.open({ instanceId: id })));
    expect(await s.sql('SELECT version FROM schema_migrations ORDER BY version')).toEqual(PG_MIGRATIONS.map((m) => ({ version: m.version })));
    await stores[0]!.accept({ messages: [newMessage('m')], now: 1 });
    expect((await stores[3]!.getMessage('m'))?.status).toBe('SUBMITTED');
  });

  it('a second running smppd with the same instance id is refused; once the first has closed, it opens', async () => {
    schema = await pgSchema();
    const first = await schema.open({ instanceId: 'host-1' });
    const refused = await schema.open({ instanceId: 'host-1' }).catch((e: unknown) => e);
    expect(isSmppdError(refused, 'INTERNAL')).toBe(true);
    expect((refused as Error).message).toMatch(/instance id host-1/);
    await schema.open({ instanceId: 'host-2' });
    await first.close();
    await expect(schema.open({ instanceId: 'host-1' })).resolves.toBeDefined();
  });

  it('stores on two schemas of one database share nothing, instance ids included', async () => {
    schema = await pgSchema();
    const other = await pgSchema();
    try {
      const here = await schema.open({ instanceId: 'same' });
      const there = await other.open({ instanceId: 'same' });
      await here.accept({ messages: [newMessage('a')], now: 1 });
      expect(await there.getMessage('a')).toBeUndefined();
      expect(await there.claim('up1', 10, 10)).toEqual([]);
    } finally {
      await other.cleanup();
    }
  });

  it('refuses a schema name that is not a lower-case SQL name, without connecting', async () => {
    const { PostgresStore } = await import('../../../src/store/postgres/postgres-store.js');
    const refused = await PostgresStore.open({ url: 'postgres://nobody@127.0.0.1:1/x', schema: 'Bad; DROP', instanceId: 'a' }).catch((e: unknown) => e);
    expect(isSmppdError(refused, 'INTERNAL')).toBe(true);
    expect((refused as Error).message).toMatch(/lower-case SQL name/);
  });
});
