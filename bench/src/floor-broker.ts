/**
 * The broker's floor beside the scale-out cases: the same publisher, load and queue, consumed by
 * as many floor consumers (`consumer.ts`) as the two-instance case has daemons, each doing
 * what a daemon's queue ingress must do and nothing else (read the request, ack). Its CPU per
 * message (RabbitMQ, the consumers, the publisher) is what the scale-out cases spend before
 * smppd stores or sends anything; at the offered rate it is a share of the machine that the
 * daemons, PostgreSQL and the simulator cannot have. Measured in the same run as those cases,
 * on the same cores at the same hour.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import type { BenchCleanup } from './cleanup.js';
import { CONSUMER_URL_ENV, type ConsumerReport } from './consumer.js';
import { listUntilExit, stopChild } from './harness.js';
import { benchMain } from './paths.js';
import { CpuMeter, percentOfCore, sleep } from './proc.js';
import { publishOpenLoop, publishSummary, type PublishSummary } from './publisher.js';
import { PUBLISH_CHANNELS, type ScaleOutFailure } from './scaleout.js';
import { BrokerWatch } from './scaleout-broker.js';
import { serverMeter } from './servers.js';
import { percentAtRate, round } from './stats.js';
import { DAEMON_NODE_FLAGS } from '../../src/cli/node-flags.js';

export interface BrokerFloorCase {
  name: string;
  /** Consumer processes, as the daemons of the two-instance case. */
  consumers: number;
  /** Each consumer's prefetch: the daemon's default. */
  prefetch: number;
  offeredRate: number;
  seconds: number;
}

export const BROKER_FLOOR_CASES: BrokerFloorCase[] = [
  { name: 'scale-out: RabbitMQ alone, 2 consumers that only read and ack', consumers: 2, prefetch: 500, offeredRate: 8000, seconds: 10 },
];

export interface BrokerFloorResult {
  case: string;
  /** The queue it made and deleted again (with `<queue>.dead`, queue and exchange). */
  queue: string;
  consumers: number;
  prefetch: number;
  offeredRate: number;
  seconds: number;
  loadAverage: number;
  publish: PublishSummary;
  consumed: number;
  /** Consumed over first publish → last delivery to a consumer. */
  consumedPerSecond: number;
  /** basic.ack frames the consumers sent per message consumed. */
  ackFramesPerMessage: number;
  /** 'all consumed' or why it gave up. */
  outcome: string;
  /** From the first publish to the last delivery, % of one core (machine: of all cores); null when RabbitMQ is not on this machine. */
  cpuPercent: { rabbitmq: number | null; consumers: number; bench: number; machine: number; others: number | null };
  /** CPU µs per message consumed, by process: what the broker's part of a scale-out case costs at least. */
  cpuUsPerMessage: { rabbitmq: number | null; consumers: number; bench: number; machine: number };
  /** The machine's CPU at the offered rate, % of all cores (200 on two): cpuUsPerMessage.machine × the rate. */
  machinePercentAtOffered: number;
  cleanupProblems: string[];
}

export type BrokerFloorOutcome = BrokerFloorResult | ScaleOutFailure;

/** Gives up when nothing was consumed for this long, ms. */
const STALL_MS = 30_000;
const READY_TIMEOUT_MS = 20_000;

/** How a consumer process is started: the bench's built entry point with the daemon's node flags (tests run the source). */
export interface ConsumerCommand {
  module: string;
  execArgv: readonly string[];
}

const BUILT: ConsumerCommand = { module: benchMain, execArgv: DAEMON_NODE_FLAGS };

/** Runs the case; never throws. `body` is the scale-out cases' request. */
export async function runBrokerFloorCase(
  c: BrokerFloorCase, amqpUrl: string, body: (n: number) => Buffer, cleanup: BenchCleanup, command: ConsumerCommand = BUILT,
): Promise<BrokerFloorOutcome> {
  const loadAverage = round(loadavg()[0] ?? 0, 2);
  const queue = `smppd-bench-floor-${randomBytes(6).toString('hex')}`;
  const consumers: FloorConsumer[] = [];
  const problems: string[] = [];
  let removeQueue: (() => Promise<string[]>) | undefined;
  let result: BrokerFloorOutcome;
  try {
    const broker = await BrokerWatch.open(amqpUrl);
    removeQueue = cleanup.add(`queue ${queue}`, () => broker.removeAndClose(queue));
    for (let i = 0; i < c.consumers; i++) consumers.push(await FloorConsumer.start(command, amqpUrl, queue, c.prefetch, cleanup));
    await broker.depth(queue); // declared by the consumers
    // The consumers' CPU from their own reports: the first now (idle until the first publish), the last at the end.
    const before = await Promise.all(consumers.map((x) => x.report()));
    let meters: { bench: CpuMeter; machine: CpuMeter; rabbitmq: ReturnType<typeof serverMeter> } | undefined;
    const published = await publishOpenLoop({
      url: amqpUrl, queue, ratePerSecond: c.offeredRate, seconds: c.seconds, channels: PUBLISH_CHANNELS, body,
      onStart: () => {
        meters = { bench: CpuMeter.ofSelf(), machine: CpuMeter.ofMachine(), rabbitmq: serverMeter('beam.smp', amqpUrl) };
      },
    });
    const waited = await waitUntilConsumed(consumers, published.confirmed);
    const unconfirmed = published.offered - published.confirmed;
    // Fewer confirmed than offered: a short load, not a floor (and not summed with PostgreSQL's).
    const outcome = unconfirmed > 0 ? `${unconfirmed} of ${published.offered} not confirmed by the broker; ${waited.outcome}` : waited.outcome;
    const reports = waited.reports;
    const m = meters!;
    const bench = m.bench.elapsed();
    const machine = m.machine.elapsed();
    const rabbitmq = m.rabbitmq?.meter.elapsed();
    const consumed = reports.reduce((a, r) => a + r.consumed, 0);
    const lastAt = Math.max(...reports.map((r) => r.lastAt).filter(Number.isFinite));
    const n = Math.max(1, consumed);
    const consumersUs = reports.reduce((a, r, i) => a + r.cpuUs - before[i]!.cpuUs, 0);
    const ackFrames = reports.reduce((a, r, i) => a + r.ackFrames - before[i]!.ackFrames, 0);
    const cpuPercent = {
      rabbitmq: rabbitmq ? percentOfCore(rabbitmq) : null,
      consumers: percentOfCore({ cpuUs: consumersUs, wallMs: machine.wallMs }), bench: percentOfCore(bench), machine: percentOfCore(machine),
    };
    const cpuUsPerMessage = {
      rabbitmq: rabbitmq ? round(rabbitmq.cpuUs / n, 1) : null,
      consumers: round(consumersUs / n, 1), bench: round(bench.cpuUs / n, 1), machine: round(machine.cpuUs / n, 1),
    };
    result = {
      case: c.name, queue, consumers: c.consumers, prefetch: c.prefetch, offeredRate: c.offeredRate, seconds: c.seconds, loadAverage,
      publish: publishSummary(published, PUBLISH_CHANNELS),
      consumed, consumedPerSecond: Number.isFinite(lastAt) ? round((consumed * 1000) / Math.max(1, lastAt - published.firstPublishAt)) : 0,
      ackFramesPerMessage: round(ackFrames / n, 3), outcome,
      cpuPercent: {
        ...cpuPercent,
        others: cpuPercent.rabbitmq === null ? null : Math.max(0, cpuPercent.machine - cpuPercent.rabbitmq - cpuPercent.consumers - cpuPercent.bench),
      },
      cpuUsPerMessage, machinePercentAtOffered: percentAtRate(cpuUsPerMessage.machine, c.offeredRate),
      cleanupProblems: [],
    };
  } catch (e) {
    result = { case: c.name, error: e instanceof Error ? e.message : String(e), cleanupProblems: [] };
  }
  for (const x of consumers) await x.stop();
  if (removeQueue) problems.push(...await removeQueue());
  result.cleanupProblems.push(...problems);
  return result;
}

/** Polls the consumers every 250 ms until they took every confirmed request, or nothing moved for STALL_MS. */
async function waitUntilConsumed(consumers: FloorConsumer[], want: number): Promise<{ outcome: string; reports: ConsumerReport[] }> {
  let last = -1;
  let lastProgress = performance.now();
  for (;;) {
    const reports = await Promise.all(consumers.map((x) => x.report()));
    const consumed = reports.reduce((a, r) => a + r.consumed, 0);
    if (consumed >= want) return { outcome: 'all consumed', reports };
    const gone = consumers.findIndex((x) => x.exited);
    if (gone >= 0) return { outcome: `gave up: consumer ${gone + 1} exited`, reports };
    if (consumed !== last) {
      last = consumed;
      lastProgress = performance.now();
    } else if (performance.now() - lastProgress >= STALL_MS) {
      return { outcome: `gave up: ${consumed} of ${want} consumed, none for ${STALL_MS / 1000} s`, reports };
    }
    await sleep(250);
  }
}

/** One floor consumer process (`main.ts consumer`), spoken to over its IPC channel. */
class FloorConsumer {
  exited = false;
  #lastReport: ConsumerReport = { consumed: 0, unreadable: 0, lastAt: NaN, ackFrames: 0, cpuUs: 0 };

  private constructor(private readonly child: ChildProcess) {
    child.once('exit', () => { this.exited = true; });
    // A failed fork, or a send to a child that has just died: the ready wait and `report` say what follows.
    child.on('error', () => {});
  }

  get pid(): number {
    return this.child.pid!;
  }

  static async start(command: ConsumerCommand, url: string, queue: string, prefetch: number, cleanup: BenchCleanup): Promise<FloorConsumer> {
    const child = fork(command.module, ['consumer', '--queue', queue, '--prefetch', String(prefetch)], {
      execArgv: [...command.execArgv], env: { ...process.env, [CONSUMER_URL_ENV]: url }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    listUntilExit(child, 'floor consumer', cleanup);
    const consumer = new FloorConsumer(child);
    try {
      await new Promise<void>((resolveReady, reject) => {
        const timer = setTimeout(() => reject(new Error(`the floor consumer was not ready within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
        child.on('message', (msg) => {
          if ((msg as { ready?: boolean }).ready !== true) return;
          clearTimeout(timer);
          resolveReady();
        });
        child.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`the floor consumer exited with ${code} before it was ready`));
        });
        child.once('error', (e) => {
          clearTimeout(timer);
          reject(new Error(`the floor consumer could not start: ${e.message}`));
        });
      });
    } catch (e) {
      await consumer.stop();
      throw e;
    }
    return consumer;
  }

  /** Its counts now; its last ones once it has exited (or could not be asked). */
  report(): Promise<ConsumerReport> {
    if (this.exited || !this.child.connected) return Promise.resolve(this.#lastReport);
    return new Promise((resolveReport) => {
      const done = (): void => {
        this.child.off('message', onMessage);
        this.child.off('exit', done);
        resolveReport(this.#lastReport);
      };
      const onMessage = (msg: unknown): void => {
        if (typeof (msg as ConsumerReport).consumed !== 'number') return;
        this.#lastReport = msg as ConsumerReport;
        done();
      };
      this.child.on('message', onMessage);
      this.child.once('exit', done);
      this.child.send('report', (e) => { if (e) done(); });
    });
  }

  /** SIGTERM, SIGKILL after 5 s. */
  async stop(): Promise<void> {
    await stopChild(this.child, 5_000);
  }
}
