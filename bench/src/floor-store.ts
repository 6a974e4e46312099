/**
 * PostgreSQL's floor beside the scale-out cases: the least a store shared by several instances
 * must write per message, on a table of its own with nothing else running. A message is inserted
 * and committed (a request is acked only after its commit), then given its SMSC id (the receipt
 * index: a receipt may come in on another instance) and finally DELIVERED by that id; an outcome
 * and the receipt of an earlier batch share one commit, as the daemon's group commit lets them.
 * One table, its key and the receipt index, `batch` messages a statement, `clients` connections
 * at once, as fast as they go, by index scans. smppd's store writes more (parts apart from messages, locks, the
 * receipts it matched), so PostgreSQL's CPU per message here is a lower bound for its part of a
 * scale-out case, measured in the same run.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { BenchCleanup } from './cleanup.js';
import { CpuMeter } from './proc.js';
import type { ScaleOutFailure } from './scaleout.js';
import { serverMeter } from './servers.js';
import { percentAtRate, round } from './stats.js';

export interface StoreFloorCase {
  name: string;
  messages: number;
  /** Messages a statement (and a commit). */
  batch: number;
  /** Connections writing at once. */
  clients: number;
  /** The scale-out cases' rate, for PostgreSQL's share of the machine at it. */
  offeredRate: number;
}

export const STORE_FLOOR_CASES: StoreFloorCase[] = [
  // 500 a statement, a consumer's prefetch: larger batches than the daemons' group commits make (a
  // commit's cost is spread over more messages), so the floor is low, not typical.
  { name: 'scale-out: PostgreSQL alone, the least a shared store writes', messages: 80_000, batch: 500, clients: 4, offeredRate: 8000 },
];

export interface StoreFloorResult {
  case: string;
  schema: string;
  messages: number;
  batch: number;
  clients: number;
  offeredRate: number;
  /** Rows DELIVERED at the end (all of them, unless a statement failed). */
  delivered: number;
  /** Commits a message: an insert's, an outcome's and receipt's. */
  commitsPerMessage: number;
  seconds: number;
  messagesPerSecond: number;
  /** null when PostgreSQL is not on this machine. */
  cpuUsPerMessage: { postgres: number | null; bench: number };
  /** PostgreSQL's CPU at the offered rate, % of one core (of 200 on two). */
  postgresPercentAtOffered: number | null;
  cleanupProblems: string[];
}

export type StoreFloorOutcome = StoreFloorResult | ScaleOutFailure;

const BODY = JSON.stringify({ destination: '447700900123', text: 'Your code is 1234', client: 'bench', reference: 'bench-1' });

/** Runs the case in a schema of its own, dropped after; never throws. */
export async function runStoreFloorCase(c: StoreFloorCase, pgUrl: string, cleanup: BenchCleanup): Promise<StoreFloorOutcome> {
  const schema = `smppd_bench_floor_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: pgUrl });
  admin.on('error', () => {}); // a dropped connection fails the next query
  const clients: pg.Client[] = [];
  let drop: (() => Promise<string[]>) | undefined;
  let result: StoreFloorOutcome;
  try {
    await admin.connect();
    drop = cleanup.add(`schema ${schema}`, async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    });
    await admin.query(`CREATE SCHEMA ${schema}`);
    // fillfactor 50, as smppd's messages (migration 4): the outcome and the receipt update in place.
    await admin.query(`CREATE TABLE ${schema}.messages (
      id TEXT PRIMARY KEY, body TEXT NOT NULL, status TEXT NOT NULL, smsc_id TEXT, updated_at BIGINT NOT NULL
    ) WITH (fillfactor = 50)`);
    await admin.query(`CREATE INDEX messages_smsc ON ${schema}.messages (smsc_id) WHERE smsc_id IS NOT NULL`);
    for (let i = 0; i < c.clients; i++) {
      // Index scans only: on a table without statistics (autovacuum off, or not yet run) the planner
      // takes a sequential scan for an array of 100 keys, which would make the floor grow with the table.
      const client = new pg.Client({ connectionString: pgUrl, options: `-c search_path=${schema} -c enable_seqscan=off -c enable_bitmapscan=off` });
      client.on('error', () => {});
      clients.push(client);
      await client.connect();
    }
    const postgres = serverMeter('postgres', pgUrl);
    const bench = CpuMeter.ofSelf();
    const started = performance.now();
    const commits = await writeAll(clients, c.messages, c.batch);
    const wallMs = performance.now() - started;
    const pgCpu = postgres?.meter.elapsed();
    const benchCpu = bench.elapsed();
    const delivered = Number((await admin.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.messages WHERE status = 'DELIVERED'`)).rows[0]?.n ?? 0);
    const postgresUs = pgCpu ? round(pgCpu.cpuUs / c.messages, 1) : null;
    result = {
      case: c.name, schema, messages: c.messages, batch: c.batch, clients: c.clients, offeredRate: c.offeredRate, delivered,
      commitsPerMessage: round(commits / c.messages, 3), seconds: round(wallMs / 1000, 2), messagesPerSecond: round((c.messages * 1000) / wallMs, 0),
      cpuUsPerMessage: { postgres: postgresUs, bench: round(benchCpu.cpuUs / c.messages, 1) },
      postgresPercentAtOffered: postgresUs === null ? null : percentAtRate(postgresUs, c.offeredRate),
      cleanupProblems: [],
    };
  } catch (e) {
    result = { case: c.name, error: e instanceof Error ? e.message : String(e), cleanupProblems: [] };
  }
  for (const client of clients) await client.end().catch(() => {});
  if (drop) result.cleanupProblems.push(...await drop());
  else await admin.end().catch(() => {});
  return result;
}

/**
 * Each client takes the next `batch` messages in turn: inserts them (one commit), then gives
 * them their SMSC ids and delivers its previous batch by theirs (one commit). Resolves to the
 * number of commits.
 */
async function writeAll(clients: pg.Client[], messages: number, batch: number): Promise<number> {
  let next = 0;
  let commits = 0;
  const one = async (client: pg.Client): Promise<void> => {
    let previous: string[] = [];
    for (let start = next; start < messages; start = next) {
      next = Math.min(messages, start + batch);
      const ids = Array.from({ length: next - start }, (_, i) => `m-${start + i}`);
      await client.query("INSERT INTO messages (id, body, status, updated_at) SELECT id, $2, 'SUBMITTED', $3 FROM unnest($1::text[]) AS id", [ids, BODY, Date.now()]);
      await client.query('BEGIN');
      await client.query("UPDATE messages SET status = 'SENT', smsc_id = 's' || id, updated_at = $2 WHERE id = ANY($1::text[])", [ids, Date.now()]);
      await deliver(client, previous);
      await client.query('COMMIT');
      commits += 2;
      previous = ids;
    }
    if (previous.length > 0) {
      await deliver(client, previous);
      commits++;
    }
  };
  await Promise.all(clients.map(one));
  return commits;
}

async function deliver(client: pg.Client, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await client.query("UPDATE messages SET status = 'DELIVERED', updated_at = $2 WHERE smsc_id = ANY($1::text[])", [ids.map((id) => `s${id}`), Date.now()]);
}
