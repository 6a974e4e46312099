/**
 * Store-only micro-benchmark: accept → claim → recordSubmit → applyReceipt for N one-part
 * messages on a fresh SQLite file, in concurrent batches (so writes share group commits as in
 * the daemon), printing CPU µs per message of each step (process.cpuUsage, user + system).
 *
 *   npm run build:bench && node bench/build/bench/store-micro.js [N] [batch] [postgres://…]
 *
 * With a PostgreSQL URL it runs on the PostgreSQL store instead (a fresh schema, dropped after),
 * and prints the wall-clock rate of each step as well: there the database's own CPU is not ours.
 *
 * SMPPD_MICRO_KEYED=1: each accept carries an idempotency key (as a sendSms with Idempotency-Key
 * does), after a step that looks each key up first and finds none (the idempotency gate's read).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processCpuUs } from './src/proc.js';
import { SystemClock } from '../src/core/index.js';
import pg from 'pg';
import { PostgresStore } from '../src/store/postgres/index.js';
import { SqliteStore } from '../src/store/sqlite/index.js';
import type { NewMessage, Store } from '../src/store/index.js';

const N = Number(process.argv[2] ?? 20_000);
const BATCH = Number(process.argv[3] ?? 200);
const PG_URL = process.argv[4];
const KEYED = process.env.SMPPD_MICRO_KEYED === '1';
const keyOf = (i: number) => ({ scope: 'http' as const, client: 'acme', key: `order-${i}` });

function message(i: number): NewMessage {
  return {
    id: `m${i}`, client: 'acme', events: true, upstream: 'up1', route: null, source: 'ACME', destination: `97150${String(i).padStart(7, '0')}`,
    text: 'hello world', messageType: 'TEXT', encoding: 'GSM-7', campaignName: null, registeredDelivery: 1,
    sourceTon: 5, sourceNpi: 0, destTon: 1, destNpi: 1, validityPeriod: '', expiresAt: null, notBefore: null,
    parts: [{ dataCoding: 0, esmClass: 0, shortMessage: Buffer.from('hello world', 'latin1') }],
  };
}

interface StepFigures {
  cpuUsPerMessage: number;
  perSecond: number;
  /** PostgreSQL: CPU of the server processes that served this store's connections. */
  serverCpuUsPerMessage?: number;
}

async function timed(name: string, fn: () => Promise<void>, results: Map<string, StepFigures>): Promise<void> {
  const start = process.cpuUsage();
  const serverStart = await serverCpuUs();
  const wallStart = performance.now();
  await fn();
  const used = process.cpuUsage(start);
  const serverUsed = serverStart === undefined ? undefined : (await serverCpuUs())! - serverStart;
  results.set(name, {
    cpuUsPerMessage: (used.user + used.system) / N, perSecond: N / ((performance.now() - wallStart) / 1000),
    ...(serverUsed === undefined ? {} : { serverCpuUsPerMessage: serverUsed / N }),
  });
}

const SCHEMA = `smppd_micro_${process.pid}`;
let inspector: pg.Client | undefined;

/** utime + stime of the PostgreSQL backends of this run's connections (application_name = SCHEMA), in µs; the server must be local. */
async function serverCpuUs(): Promise<number | undefined> {
  if (inspector === undefined) return undefined;
  const { rows } = await inspector.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [SCHEMA]);
  let total = 0;
  for (const { pid } of rows) {
    try {
      total += processCpuUs(pid);
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

async function openStore(dir: string): Promise<Store> {
  if (PG_URL === undefined) return SqliteStore.open({ path: join(dir, 'smppd.db'), clock: new SystemClock() });
  inspector = new pg.Client({ connectionString: PG_URL });
  await inspector.connect();
  const url = new URL(PG_URL);
  url.searchParams.set('application_name', SCHEMA);
  // Connections stay open between the steps, so each step's server CPU is read off the same processes.
  return PostgresStore.open({ url: url.toString(), schema: SCHEMA, instanceId: 'micro', poolSize: 20 });
}

async function dropSchema(): Promise<void> {
  if (PG_URL === undefined) return;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'smppd-micro-'));
  const store = await openStore(dir);
  const results = new Map<string, StepFigures>();
  const now = 1_700_000_000_000;
  const chunks = Array.from({ length: Math.ceil(N / BATCH) }, (_, c) =>
    Array.from({ length: Math.min(BATCH, N - c * BATCH) }, (_, j) => c * BATCH + j));
  const claimed: string[] = [];
  try {
    if (KEYED) {
      await timed('lookup key', async () => {
        for (const chunk of chunks) await Promise.all(chunk.map(async (i) => { if (await store.findIdempotencyKey(keyOf(i), now)) throw new Error('a key found'); }));
      }, results);
    }
    await timed(KEYED ? 'accept keyed' : 'accept', async () => {
      for (const chunk of chunks) {
        await Promise.all(chunk.map((i) => store.accept({
          messages: [message(i)], now, ...(KEYED ? { idempotencyKey: { ...keyOf(i), fingerprint: `f${i}`, expiresAt: now + 86_400_000 } } : {}),
        })));
      }
    }, results);
    await timed('claim', async () => {
      // Several small claims per group commit, as the pool's windows do.
      for (;;) {
        const got = (await Promise.all(Array.from({ length: 10 }, () => store.claim('up1', now, BATCH / 10)))).flat();
        if (got.length === 0) break;
        for (const m of got) claimed.push(m.id);
      }
    }, results);
    if (claimed.length !== N) throw new Error(`claimed ${claimed.length} of ${N}`);
    await timed('recordSubmit', async () => {
      for (const chunk of chunks) {
        await Promise.all(chunk.map((i) => store.recordSubmit(`m${i}`, [
          { part: 1, kind: 'accepted', smscId: `s${i}`, matchKey: `s${i}`, bind: 'b1', attempts: 1 },
        ], now + 1)));
      }
    }, results);
    await timed('applyReceipt', async () => {
      for (const chunk of chunks) {
        await Promise.all(chunk.map((i) => store.applyReceipt({
          upstream: 'up1', keys: [`s${i}`], status: 'DELIVERED', reason: null, raw: { text: `id:s${i} stat:DELIVRD` }, receivedAt: now + 2,
        })));
      }
    }, results);
    const check = await store.getMessage(`m${N - 1}`);
    if (check?.status !== 'DELIVERED') throw new Error(`last message is ${check?.status ?? 'missing'}`);
  } finally {
    await store.close();
    await inspector?.end();
    await dropSchema();
    rmSync(dir, { recursive: true, force: true });
  }
  let total = 0;
  process.stdout.write(`N=${N} batch=${BATCH} store=${PG_URL === undefined ? 'sqlite' : 'postgres'}${KEYED ? ' keyed' : ''}\n`);
  for (const [name, f] of results) {
    total += f.cpuUsPerMessage;
    const server = f.serverCpuUsPerMessage === undefined ? '' : `   server ${f.serverCpuUsPerMessage.toFixed(1).padStart(7)} µs/message`;
    process.stdout.write(`${name.padEnd(14)} ${f.cpuUsPerMessage.toFixed(1).padStart(7)} µs/message ${Math.round(f.perSecond).toString().padStart(8)}/s${server}\n`);
  }
  process.stdout.write(`${'total'.padEnd(14)} ${total.toFixed(1).padStart(7)} µs/message\n`);
}

await main();
