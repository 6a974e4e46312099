/**
 * Helpers for tests of the PostgreSQL store. They run against the database named by
 * SMPPD_TEST_PG_URL and are skipped without it (the suite's name says how to run them). Each
 * test gets a schema of its own, with a random name, dropped after it: test files run in parallel
 * on one database.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterEach, beforeEach, describe } from 'vitest';
import { PostgresStore, type PostgresStoreOptions } from '../../../src/store/postgres/postgres-store.js';
import { sessionOptions, TYPES } from '../../../src/store/postgres/db.js';
import { CLAIM_EVENTS_SQL } from '../../../src/store/postgres/event-delivery.js';
import { WallClockAt, type Rows, type StoreHarness } from '../../support/store-conformance/harness.js';

export const PG_URL = process.env.SMPPD_TEST_PG_URL;

const HOW_TO_RUN = 'skipped; set SMPPD_TEST_PG_URL to a PostgreSQL database the tests may create schemas in, e.g. '
  + 'SMPPD_TEST_PG_URL=postgres://postgres@127.0.0.1:5432/test npx vitest run test/integration/postgres';

/** `describe` that runs only with SMPPD_TEST_PG_URL set; skipped, it prints one line saying how to run it. */
export function describePg(name: string, body: () => void): void {
  if (PG_URL === undefined) {
    // eslint-disable-next-line no-console -- a skipped suite's one line about why it did not run
    console.log(`${name}: ${HOW_TO_RUN}`);
  }
  describe.skipIf(PG_URL === undefined)(name, body);
}

export type { Rows };

export interface PgSchema {
  name: string;
  /** Opens a store on the schema; instance 'test-a' unless told. Closed by `cleanup`. */
  open(options?: Partial<Omit<PostgresStoreOptions, 'url' | 'schema'>>): Promise<PostgresStore>;
  /** Runs SQL on the schema through a connection of its own (an operator's psql). */
  sql: Rows;
  /** Closes every store it opened and drops the schema. */
  cleanup(): Promise<void>;
}

export async function pgSchema(): Promise<PgSchema> {
  if (PG_URL === undefined) throw new Error('SMPPD_TEST_PG_URL is not set');
  const url = PG_URL;
  const name = `smppd_t_${randomBytes(6).toString('hex')}`;
  const stores: PostgresStore[] = [];
  // The store's session settings (its planner's too): plans explained here are the store's.
  const inspector = new pg.Client({ connectionString: url, options: sessionOptions(name), types: TYPES });
  await inspector.connect();
  return {
    name,
    async open(options = {}) {
      const store = await PostgresStore.open({ url, schema: name, instanceId: 'test-a', poolSize: 4, ...options });
      stores.push(store);
      return store;
    },
    async sql<R>(text: string, params: unknown[] = []) {
      return (await inspector.query(text, params)).rows as R[];
    },
    async cleanup() {
      for (const s of stores) await s.close();
      await inspector.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
      await inspector.end();
    },
  };
}

/** What `storePerTest` opens: read its fields inside tests, after `beforeEach` ran. */
export interface PgStoreUnderTest {
  schema: PgSchema;
  store: PostgresStore;
  sql: Rows;
}

/** A fresh schema and a store on it for every test of the calling `describe`, dropped after it. */
export function pgStorePerTest(options: Partial<Omit<PostgresStoreOptions, 'url' | 'schema'>> = {}): PgStoreUnderTest {
  const t = {} as PgStoreUnderTest;
  beforeEach(async () => {
    t.schema = await pgSchema();
    t.store = await t.schema.open(options);
    t.sql = t.schema.sql;
  });
  afterEach(async () => t.schema?.cleanup());
  return t;
}

/** What `pgInstancesPerTest` opens: two stores on one schema, as two smppd processes on two hosts. */
export interface PgInstancesUnderTest {
  schema: PgSchema;
  a: PostgresStore;
  b: PostgresStore;
}

/** A fresh schema with instances host-a and host-b on it for every test of the calling `describe`, dropped after it. */
export function pgInstancesPerTest(options: Partial<Omit<PostgresStoreOptions, 'url' | 'schema' | 'instanceId'>> = {}): PgInstancesUnderTest {
  const t = {} as PgInstancesUnderTest;
  beforeEach(async () => {
    t.schema = await pgSchema();
    t.a = await t.schema.open({ instanceId: 'host-a', poolSize: 10, ...options });
    t.b = await t.schema.open({ instanceId: 'host-b', poolSize: 10, ...options });
  });
  afterEach(async () => t.schema?.cleanup());
  return t;
}

/** The status events after acceptance, read as the store conformance scenarios read them. */
export { changeEvents } from '../../support/store-conformance/harness.js';

/**
 * The store conformance scenarios' harness (test/support/store-conformance/) on PostgresStore: a
 * schema of its own per test, inspected through SQL on a separate connection; a restart is a
 * close and an open with the same instance id.
 */
export async function postgresHarness(): Promise<StoreHarness> {
  const schema = await pgSchema();
  const clock = new WallClockAt();
  return {
    clock,
    open: (options = {}) => schema.open({ clock, ...options }),
    rows: schema.sql,
    claimEventsSql: CLAIM_EVENTS_SQL,
    async dueEventsPlan(client, now) {
      // On tables this small the planner would rather scan: ask for the plan it has with the index.
      await schema.sql('SET enable_seqscan = off');
      try {
        const plan = await schema.sql<{ 'QUERY PLAN': string }>(
          `EXPLAIN SELECT id FROM outbox WHERE client = '${client}' AND state = 'pending' AND next_attempt_at <= ${now} ORDER BY next_attempt_at, id`);
        return plan.map((r) => r['QUERY PLAN']).join(' ');
      } finally {
        await schema.sql('RESET enable_seqscan');
      }
    },
    close: () => schema.cleanup(),
  };
}
