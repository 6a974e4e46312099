/**
 * Store-only micro-benchmark: accept → claim → recordSubmit → applyReceipt for N one-part
 * messages on a fresh SQLite file, in concurrent batches (so writes share group commits as in
 * the daemon), printing CPU µs per message of each step (process.cpuUsage, user + system).
 *
 *   node --import ./test/support/ts-register.mjs bench/store-micro.ts [N] [batch]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SystemClock } from '../src/core/clock.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { NewMessage } from '../src/store/store.js';

const N = Number(process.argv[2] ?? 20_000);
const BATCH = Number(process.argv[3] ?? 200);

function message(i: number): NewMessage {
  return {
    id: `m${i}`, client: 'acme', events: true, upstream: 'up1', source: 'ACME', destination: `97150${String(i).padStart(7, '0')}`,
    text: 'hello world', messageType: 'TEXT', encoding: 'GSM-7', campaignName: null, registeredDelivery: 1,
    sourceTon: 5, sourceNpi: 0, destTon: 1, destNpi: 1, validityPeriod: '', expiresAt: null, notBefore: null,
    parts: [{ dataCoding: 0, esmClass: 0, shortMessage: Buffer.from('hello world', 'latin1') }],
  };
}

async function timed(name: string, fn: () => Promise<void>, results: Map<string, number>): Promise<void> {
  const start = process.cpuUsage();
  await fn();
  const used = process.cpuUsage(start);
  results.set(name, (used.user + used.system) / N);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'smppd-micro-'));
  const store = await SqliteStore.open({ path: join(dir, 'smppd.db'), clock: new SystemClock() });
  const results = new Map<string, number>();
  const now = 1_700_000_000_000;
  const chunks = Array.from({ length: Math.ceil(N / BATCH) }, (_, c) =>
    Array.from({ length: Math.min(BATCH, N - c * BATCH) }, (_, j) => c * BATCH + j));
  const claimed: string[] = [];
  try {
    await timed('accept', async () => {
      for (const chunk of chunks) await Promise.all(chunk.map((i) => store.accept({ messages: [message(i)], now })));
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
    rmSync(dir, { recursive: true, force: true });
  }
  let total = 0;
  process.stdout.write(`N=${N} batch=${BATCH}\n`);
  for (const [name, us] of results) {
    total += us;
    process.stdout.write(`${name.padEnd(14)} ${us.toFixed(1).padStart(7)} µs/message\n`);
  }
  process.stdout.write(`${'total'.padEnd(14)} ${total.toFixed(1).padStart(7)} µs/message\n`);
}

await main();
