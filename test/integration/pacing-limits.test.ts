import { afterAll, describe, expect, it } from 'vitest';
import { SystemClock } from '../../src/core/clock.js';
import { Pool } from '../../src/smpp/pool.js';
import { fileURLToPath } from 'node:url';
import type { BehaviourPatch } from '../../src/simulator/behaviour.js';
import { noEngineMetrics } from '../../src/smpp/engine-metrics.js';
import { part, upstream } from '../support/engine.js';
import { freePort } from '../support/free-port.js';
import { recordingLog } from '../support/http.js';
import { JsonLinesProcess } from '../support/json-lines-process.js';

/**
 * The pool against the simulator over real sockets, with the SMSC allowing less than smppd is
 * configured for: per bind, per account, and a limit that drops mid-run and comes back. Each
 * scenario keeps the pool's queue full for its whole run and samples what the SMSC accepted and
 * throttled; they run at once, each with its own simulator, so the file takes as long as the
 * longest. The thresholds are the controller's promise: ≥ 95 % of the SMSC's limit once settled
 * (10 s after the start, or after a change), at most 1 % of submits throttled after that.
 */

const clock = new SystemClock();
const SAMPLE_MS = 250;

interface Scenario {
  binds: number;
  ratePerBind: number;
  accountRate?: number;
  tls?: boolean;
  behaviour: BehaviourPatch;
  /** Behaviour changes: [seconds from the start, patch]. */
  changes?: Array<[number, BehaviourPatch]>;
  seconds: number;
}

interface Sample {
  at: number;
  received: number;
  throttled: number;
  /** The first bind's pacing then (for a failure's story). */
  rate: number;
  limit: number;
}

interface Run {
  /** Each second: accepted, throttled, the first bind's rate and learned limit (for a failure's message). */
  story: string;
  /** Accepted submit_sm per second between two points (seconds from the start), and the throttled share. */
  between(from: number, to: number): { acceptedPerSecond: number; throttledShare: number; received: number; throttled: number };
  pool: ReturnType<Pool['stats']>;
  account: ReturnType<Pool['accountStats']>[number] | undefined;
  log: string[];
}

/**
 * `smppd simulate` in a process of its own, as an SMSC on another host would be: in this process its
 * event loop would share every stall of the pools', and a late read that empties its small burst
 * would refuse what an SMSC across a network accepts.
 */
async function simulatorChild(s: Scenario, cleanups: Array<() => void>): Promise<{ port: number; status: string }> {
  const statusPort = await freePort();
  const b = s.behaviour;
  const child = new JsonLinesProcess(process.execPath, [
    '--import', './test/support/ts-register.mjs', 'src/main.ts', 'simulate', '--port', '0', '--status-port', String(statusPort), '--no-receipts',
    '--throttle-rate', String(b.throttleRatePerBind ?? 0), '--throttle-burst', String(b.throttleBurst ?? 0),
    '--account-throttle-rate', String(b.throttleRatePerAccount ?? 0), '--account-throttle-burst', String(b.throttleAccountBurst ?? 0),
    ...(s.tls ? ['--tls-cert', fileURLToPath(new URL('../fixtures/tls/server.crt', import.meta.url)), '--tls-key', fileURLToPath(new URL('../fixtures/tls/server.key', import.meta.url))] : []),
  ]);
  cleanups.push(() => child.kill());
  const [listening] = await child.next('listening', 1, 20_000);
  return { port: Number(listening!['port']), status: `http://127.0.0.1:${statusPort}` };
}

async function counters(status: string): Promise<{ received: number; throttled: number }> {
  const body = await (await fetch(`${status}/status`)).json() as { totals: { submitsReceived: number; throttled: number } };
  return { received: body.totals.submitsReceived, throttled: body.totals.throttled };
}

async function run(s: Scenario): Promise<Run> {
  const cleanups: Array<() => void> = [];
  const { port, status } = await simulatorChild(s, cleanups);
  const log: string[] = [];
  const settings = { ...upstream({ port, binds: s.binds, ratePerBind: s.ratePerBind, burst: Math.max(1, Math.ceil(s.ratePerBind / 50)), tls: s.tls ?? false }), accountRate: s.accountRate ?? 0 };
  const pool = new Pool({ upstreams: [settings], clock, log: recordingLog(log), metrics: noEngineMetrics });
  pool.start();
  const start = Date.now();
  const samples: Sample[] = [];
  let n = 0;
  const feed = setInterval(() => {
    // Keep a second's worth of work waiting, so the binds are never short of it.
    while (pool.queued('sim') < 1_500) void pool.submit('sim', [part(`4917${String(n++).padStart(7, '0')}`)]).catch(() => {});
  }, 20);
  const sample = setInterval(() => {
    const at = (Date.now() - start) / 1000;
    const b = pool.stats()[0]!;
    void counters(status).then((c) => samples.push({ at, ...c, rate: Math.round(b.rate), limit: Math.round(b.learnedLimit ?? 0) }), () => {});
  }, SAMPLE_MS);
  const timers = (s.changes ?? []).map(([at, patch]) => setTimeout(() => {
    void fetch(`${status}/behaviour`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(patch) });
  }, at * 1000));
  await new Promise((r) => setTimeout(r, s.seconds * 1000));
  clearInterval(feed);
  clearInterval(sample);
  for (const t of timers) clearTimeout(t);
  const stats = { pool: pool.stats(), account: pool.accountStats()[0] };
  const story = JSON.stringify(samples.filter((_, i) => i % 4 === 0).map((x, i, a) => (i === 0 ? [] : [
    x.received - x.throttled - a[i - 1]!.received + a[i - 1]!.throttled, x.throttled - a[i - 1]!.throttled, x.rate, x.limit,
  ])));
  await pool.stop(100);
  for (const c of cleanups) c();
  const at = (t: number): Sample => samples.reduce((best, x) => (Math.abs(x.at - t) < Math.abs(best.at - t) ? x : best));
  return {
    ...stats, log, story,
    between(from, to) {
      const a = at(from);
      const b = at(to);
      const received = b.received - a.received;
      const throttled = b.throttled - a.throttled;
      return { acceptedPerSecond: (received - throttled) / (b.at - a.at), throttledShare: received === 0 ? 0 : throttled / received, received, throttled };
    },
  };
}

const sum = (xs: number[]): number => xs.reduce((n, x) => n + x, 0);

describe('pacing that finds the SMSC\'s real limit', { timeout: 60_000 }, () => {
  // All at once: each keeps its own simulator and pool busy for its whole run.
  // Each SMSC saves up 100 ms of its rate: on these shared cores, five pools and five SMSCs run at
  // once beside other tests, and an SMSC that loses its tokens whenever its process waits 20 ms
  // for a core accepts less than its rate (one with a 20 ms burst took 430-440/s of its 500/s
  // here in a busy hour), which an SMSC on a host of its own would not. A 20 ms burst is
  // test/unit/smpp/pacing.test.ts's, against a model SMSC on an injected clock.
  const runs = {
    perBind: run({ binds: 1, ratePerBind: 1000, tls: true, behaviour: { throttleRatePerBind: 500, throttleBurst: 50 }, seconds: 20 }),
    unpaced: run({ binds: 1, ratePerBind: 0, behaviour: { throttleRatePerBind: 1000, throttleBurst: 100 }, seconds: 20 }),
    moving: run({
      binds: 1, ratePerBind: 1000, behaviour: { throttleRatePerBind: 800, throttleBurst: 80 }, seconds: 45,
      changes: [[15, { throttleRatePerBind: 300, throttleBurst: 30 }], [30, { throttleRatePerBind: 800, throttleBurst: 80 }]],
    }),
    account: run({ binds: 3, ratePerBind: 1000, accountRate: 3000, behaviour: { throttleRatePerAccount: 900, throttleAccountBurst: 90 }, seconds: 20 }),
    accountRate: run({ binds: 3, ratePerBind: 1000, accountRate: 600, behaviour: { throttleRatePerAccount: 2000 }, seconds: 8 }),
  };
  afterAll(async () => {
    await Promise.allSettled(Object.values(runs));
  });

  it('a bind over TLS configured at 1,000/s settles at ≥ 95 % of an SMSC that allows 500/s, ≤ 1 % throttled, and says so once', async () => {
    const r = await runs.perBind;
    const settled = r.between(10, 20);
    expect(settled.acceptedPerSecond, r.story).toBeGreaterThanOrEqual(0.95 * 500);
    expect(settled.throttledShare, r.story).toBeLessThanOrEqual(0.01);
    expect(r.pool[0]!.learnedLimit).toBeGreaterThan(450);
    expect(r.pool[0]!.learnedLimit).toBeLessThan(550);
    expect(r.pool[0]!.rate).toBeLessThanOrEqual(r.pool[0]!.learnedLimit! * 1.2);
    const learned = r.log.map((l) => JSON.parse(l) as { event?: string; limit?: number }).filter((l) => l.event === 'rate_limit_learned');
    expect(learned.length).toBeGreaterThanOrEqual(1);
    expect(learned.at(-1)!.limit).toBeGreaterThan(450);
  });

  it('an unpaced bind paces itself from its first throttle on', async () => {
    const r = await runs.unpaced;
    const settled = r.between(10, 20);
    expect(settled.acceptedPerSecond, r.story).toBeGreaterThanOrEqual(0.95 * 1000);
    expect(settled.throttledShare, r.story).toBeLessThanOrEqual(0.01);
    expect(r.pool[0]!.rate).toBeGreaterThan(0);
  });

  it('follows a limit that drops mid-run and finds it again when it comes back', async () => {
    const r = await runs.moving;
    // Settled within 10 s of each change: at 800/s, at 300/s after the drop, at 800/s again.
    const settled = [r.between(10, 15), r.between(25, 30), r.between(40, 45)];
    const limits = [800, 300, 800];
    for (const [i, w] of settled.entries()) expect(w.acceptedPerSecond, `window ${i}: ${r.story}`).toBeGreaterThanOrEqual(0.95 * limits[i]!);
    // Throttled, over all the settled time (one probe's few throttles are 1 % of a 5 s window at 300/s).
    const submits = settled.map((w) => w.received);
    const throttled = settled.map((w) => w.throttled);
    expect(sum(throttled) / sum(submits), r.story).toBeLessThanOrEqual(0.01);
  });

  it('three binds sharing an account the SMSC limits to 900/s learn it as an account', async () => {
    const r = await runs.account;
    const settled = r.between(10, 20);
    expect(settled.acceptedPerSecond, r.story).toBeGreaterThanOrEqual(0.95 * 900);
    expect(settled.throttledShare, r.story).toBeLessThanOrEqual(0.01);
    expect(r.account?.learnedLimit).toBeGreaterThan(800);
    expect(r.account?.learnedLimit).toBeLessThan(1000);
    expect(r.account?.throttleEpisodes).toBeGreaterThan(0);
    // The binds counted the throttles, the account measured them.
    expect(r.pool.every((b) => b.learnedLimit === null)).toBe(true);
    expect(r.pool.reduce((n, b) => n + b.throttledSubmits, 0)).toBeGreaterThan(0);
  });

  it('binds never go over accountRate together, though each could and the SMSC would take more', async () => {
    const r = await runs.accountRate;
    const steady = r.between(2, 8);
    expect(steady.acceptedPerSecond, r.story).toBeGreaterThanOrEqual(0.95 * 600);
    expect(steady.acceptedPerSecond, r.story).toBeLessThanOrEqual(600 * 1.02);
    expect(steady.throttledShare).toBe(0);
    expect(r.account).toMatchObject({ share: 600 });
  });
});
