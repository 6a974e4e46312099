/**
 * What the daemon benchmark measures around a running daemon (`daemon.ts`, `bulk-stream.ts`):
 * the CPU of each process, the receipts the simulator had acknowledged (the daemon answers a
 * receipt only after it committed it: an acknowledged receipt is a DELIVERED message), and,
 * once the daemon has stopped, the times of the messages in its store.
 */
import { SystemClock } from '../../src/core/index.js';
import type { SimulatorCounters } from '../../src/simulator/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import type { DaemonCaseResult, E2eFigures } from './daemon-case.js';
import type { DaemonUnderTest } from './harness.js';
import { CpuMeter, percentOfCore, sleep } from './proc.js';
import { percentile } from './stats.js';

export interface Meters {
  daemon: CpuMeter;
  daemonWaiting: CpuMeter;
  simulator: CpuMeter;
  bench: CpuMeter;
  machine: CpuMeter;
  submitsBefore: Promise<number>;
}

export function startMeters(d: DaemonUnderTest): Meters {
  return {
    daemon: CpuMeter.ofPid(d.pid),
    daemonWaiting: CpuMeter.waitOfPid(d.pid),
    simulator: CpuMeter.ofPid(d.simulatorPid),
    bench: CpuMeter.ofSelf(),
    machine: CpuMeter.ofMachine(),
    // NaN rather than an unhandled rejection while the load runs: the figure shows it.
    submitsBefore: d.simulatorCounters().then((s) => s.totals.submitsReceived, () => NaN),
  };
}

export function cpuPercent(m: Meters): { percent: DaemonCaseResult['cpuPercent']; daemonCpuUs: number } {
  const daemon = m.daemon.elapsed();
  return {
    percent: {
      daemon: percentOfCore(daemon), simulator: percentOfCore(m.simulator.elapsed()), bench: percentOfCore(m.bench.elapsed()),
      machine: percentOfCore(m.machine.elapsed()), daemonWaiting: percentOfCore(m.daemonWaiting.elapsed()),
    },
    daemonCpuUs: daemon.cpuUs,
  };
}

export function maxOutstanding(s: SimulatorCounters): number {
  return s.binds.reduce((m, b) => Math.max(m, b.maxOutstanding), 0);
}

/**
 * Waits until the simulator has had `accepted` receipts answered ESME_ROK: the daemon answers a
 * receipt only after it committed it, so then every accepted message is DELIVERED in the store.
 * Resolves with the time the last one was seen (polled every 50 ms), or when `timeoutMs` is up.
 */
export async function waitForReceipts(d: DaemonUnderTest, accepted: number, timeoutMs: number): Promise<number> {
  const giveUpAt = performance.now() + timeoutMs;
  let last = -1;
  while (performance.now() < giveUpAt) {
    const ok = (await d.simulatorCounters()).totals.deliverSmResponses['ESME_ROK'] ?? 0;
    if (ok >= accepted) return performance.now();
    last = ok;
    await sleep(50);
  }
  process.stderr.write(`bench: gave up waiting for receipts: ${last} of ${accepted} acknowledged after ${timeoutMs} ms\n`);
  return performance.now();
}

/** Receipts the simulator had acknowledged, read every 100 ms from `from` (a performance.now()) until `stop`. */
export class ReceiptSampler {
  readonly #samples: Array<{ at: number; ok: number }> = [];
  #stopped = false;
  readonly #running: Promise<void>;

  constructor(d: DaemonUnderTest, from: number) {
    this.#running = (async () => {
      while (!this.#stopped) {
        const ok = await d.simulatorCounters().then((c) => c.totals.deliverSmResponses['ESME_ROK'] ?? 0, () => undefined);
        if (ok !== undefined) this.#samples.push({ at: performance.now() - from, ok });
        await sleep(100);
      }
    })();
  }

  /** Stops; the receipts acknowledged in each whole second since `from` (each second's end read within 100 ms). */
  async stop(): Promise<number[]> {
    this.#stopped = true;
    await this.#running;
    const perSecond: number[] = [];
    let before = 0;
    let i = 0;
    for (let second = 1; ; second++) {
      while (i < this.#samples.length && this.#samples[i]!.at <= second * 1000) i++;
      if (i >= this.#samples.length) return perSecond;
      const atEnd = i > 0 ? this.#samples[i - 1]!.ok : 0;
      perSecond.push(atEnd - before);
      before = atEnd;
    }
  }
}

/** The median and lowest of per-second counts, the first and the last second left out (fewer than three: all). */
export function steadyRate(samples: number[]): { samples: number[]; median: number; min: number } {
  const inner = samples.length >= 3 ? samples.slice(1, -1) : samples;
  const sorted = [...inner].sort((a, b) => a - b);
  return { samples, median: sorted.length === 0 ? 0 : sorted[Math.floor((sorted.length - 1) / 2)]!, min: sorted[0] ?? 0 };
}

/**
 * After the daemon stopped, the sendbulk case: accept→DELIVERED of every message in the store
 * (the upload's answer does not name them). A message waits in the queue behind the numbers
 * before it, so this is the queue's wait more than the path's.
 */
export async function bulkLatencies(d: DaemonUnderTest): Promise<Pick<E2eFigures, 'acceptToDeliveredP50Ms' | 'acceptToDeliveredP99Ms' | 'acceptToDeliveredMaxMs'>> {
  const store = await SqliteStore.open({ path: d.storePath, clock: new SystemClock() });
  try {
    const latencies = (await store.messageTimes()).filter((m) => m.status === 'DELIVERED').map((m) => m.updatedAt - m.createdAt);
    return {
      acceptToDeliveredP50Ms: percentile(latencies, 50), acceptToDeliveredP99Ms: percentile(latencies, 99),
      acceptToDeliveredMaxMs: latencies.reduce((m, v) => Math.max(m, v), 0),
    };
  } finally {
    await store.close();
  }
}
