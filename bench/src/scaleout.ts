/**
 * The scale-out benchmark: send requests published to one durable RabbitMQ queue at an offered
 * rate, consumed by one or two daemons (`smppd start`) that share one PostgreSQL store and send
 * through their binds to one simulator (receipts on, as in the daemon e2e case), until every
 * request is DELIVERED. Two instances × 4 binds and one instance × 8 binds take the same
 * load, side by side. The bench process publishes (persistent, publisher confirms), watches the
 * queues and reads the store; what it reports comes from the store's rows (each request's
 * created_at and DELIVERED updated_at against the time it was published), the simulator's
 * counters, the daemons' /metrics and /proc.
 *
 * Each case has a fresh schema and queue, dropped and deleted after it, and its processes are
 * stopped (killed when the case failed) whatever happens. Each of them is listed with the run's
 * `BenchCleanup` as soon as it exists, so that an interrupted run (SIGINT, SIGTERM) kills the
 * processes and removes the rest too.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchCleanup, Cleanup } from './cleanup.js';
import { DaemonProcess, SimulatorProcess } from './harness.js';
import { sendSmsBody } from './load.js';
import { CpuMeter, percentOfCore, sleep } from './proc.js';
import { publishOpenLoop, publishSummary, type PublishResult, type PublishSummary } from './publisher.js';
import { BrokerWatch } from './scaleout-broker.js';
import { BenchSchema, deliveryFigures, type Quantiles } from './scaleout-store.js';
import { serverMeter } from './servers.js';
import { round } from './stats.js';

export interface ScaleOutCase {
  name: string;
  instances: number;
  bindsPerInstance: number;
  ratePerBind: number;
  /** Requests published per second (open loop). */
  offeredRate: number;
  /** Seconds of publishing. */
  seconds: number;
}

export const SCALEOUT_CASES: ScaleOutCase[] = [
  { name: 'scale-out: 2 instances × 4 binds, RabbitMQ + PostgreSQL', instances: 2, bindsPerInstance: 4, ratePerBind: 1000, offeredRate: 8000, seconds: 10 },
  { name: 'scale-out: 1 instance × 8 binds, RabbitMQ + PostgreSQL', instances: 1, bindsPerInstance: 8, ratePerBind: 1000, offeredRate: 8000, seconds: 10 },
];

/** Where the servers are (URLs with credentials: never printed). */
export interface ScaleOutServers {
  pgUrl: string;
  amqpUrl: string;
}

/** The simulator's receipts, as the daemon e2e case has them: 0–50 ms after the submit_sm_resp. */
const RECEIPTS = { min: 0, max: 50 };
/** The client the daemons send the queue's messages as (amqp.client); its wait queue goes with the queue. */
const BENCH_CLIENT = 'bench';
/** Confirm channels the publisher uses in turn (the broker's floor uses as many). */
export const PUBLISH_CHANNELS = 4;
/** The deadline after the last publish is the larger of a minute and the load at this many DELIVERED per second. */
const SLOWEST_DELIVERED_PER_SECOND = 250;
/** Gives up sooner when neither a receipt is acknowledged nor the queue's depth moves for this long, ms. */
const STALL_MS = 60_000;

export interface PerInstance {
  instanceId: string;
  /** smppd_bind_submits_total when the case ended. */
  submits: number;
  /** smppd_receipts_total by result when the case ended (parked: it came before its submit_sm_resp was recorded). */
  receipts: Record<string, number>;
  /** smppd_dispatched_total by how messages reached the binds: from a claim, or straight from their accept. */
  dispatched: Record<string, number>;
  cpuPercent: number;
  /** Time its main thread was ready to run but waited for a core, % of the wall time. */
  waitingPercent: number;
  peakRssMb: number;
  exitCode: number | null;
  warnings: number;
  warningsWhileStopping: number;
}

export interface ScaleOutCaseResult {
  case: string;
  instances: number;
  bindsPerInstance: number;
  ratePerBind: number;
  offeredRate: number;
  seconds: number;
  /** 1-minute load average of the machine when the case started (other work shares the cores). */
  loadAverage: number;
  publish: PublishSummary;
  /** Copied to the dead-letter queue (refused requests). */
  deadLettered: number;
  /** Ready in the queue when the case ended. */
  leftInQueue: number;
  /** The queue's ready messages, sampled every second: the highest. */
  maxQueueDepth: number;
  /** Requests in the store (distinct), and rows beyond one per request. */
  accepted: number;
  storedTwice: number;
  /** Confirmed by the broker, not dead-lettered, and not in the store when the case ended. */
  notStored: number;
  /** accepted over first publish → last store. */
  acceptedPerSecond: number;
  delivered: number;
  /** Stored and not DELIVERED when the case ended, by status. */
  notDelivered: Record<string, number>;
  /** DELIVERED over first publish → last DELIVERED. */
  deliveredPerSecond: number;
  /** Last publish → last DELIVERED (or → the end of the wait, when it gave up). */
  drainSeconds: number;
  /** 'all DELIVERED' or why it gave up. */
  outcome: string;
  deadlineSeconds: number;
  publishToStoredMs: Quantiles;
  acceptToDeliveredMs: Quantiles;
  publishToDeliveredMs: Quantiles;
  /** submit_sm at the simulator over first publish → last DELIVERED. */
  smscSubmits: number;
  smscSubmitsPerSecond: number;
  smscMaxOutstandingPerBind: number;
  smscThrottled: number;
  perInstance: PerInstance[];
  /**
   * From the first publish to the end of the wait, % of one core (the machine: of all cores).
   * postgres, rabbitmq: null when the server is not on this machine. others: the machine less
   * every process of the case (work that shares the cores), null when a server was not metered.
   */
  cpuPercent: { daemons: number; simulator: number; bench: number; postgres: number | null; rabbitmq: number | null; machine: number; others: number | null };
  /** The server processes metered (tree roots). */
  serverPids: { postgres: number[]; rabbitmq: number[] };
  /** All daemons' CPU over the case per accepted request, µs. */
  daemonCpuUsPerMessage: number;
  /** The bench process's CPU per request published (publishing, confirms, watching), µs. */
  benchCpuUsPerMessage: number;
  /** Where undelivered requests were when it ended. */
  stuck?: { parts: Record<string, number>; parkedReceipts: number };
  firstWarnings: string[];
  cleanupProblems: string[];
}

export interface ScaleOutFailure {
  case: string;
  error: string;
  cleanupProblems: string[];
}

export type ScaleOutOutcome = ScaleOutCaseResult | ScaleOutFailure;

/** The n-th request: sendSms's body with a distinct destination (which carries n) and the caller's reference. */
export function scaleOutBody(n: number): Buffer {
  return Buffer.from(`${sendSmsBody(n).slice(0, -1)},"reference":"bench-${n}"}`);
}

/** What a case runs on; `cleanUp` takes down whatever of it was started. */
interface Rig {
  dir: string;
  queue: string;
  schema?: BenchSchema;
  broker?: BrokerWatch;
  simulator?: SimulatorProcess;
  daemons: DaemonProcess[];
  /** Removes the folder, the schema, the queues: what is not a process, in the order made. */
  removals: Cleanup[];
}

/**
 * Runs one case; never throws (a failure is reported as such, after the clean-up). Lists what it
 * creates with `cleanup` and takes it off again at its end.
 */
export async function runScaleOutCase(c: ScaleOutCase, servers: ScaleOutServers, cleanup: BenchCleanup): Promise<ScaleOutOutcome> {
  const loadAverage = round(loadavg()[0] ?? 0, 2);
  const dir = mkdtempSync(join(tmpdir(), 'smppd-bench-scaleout-'));
  const rig: Rig = {
    dir, queue: `smppd-bench-${randomBytes(6).toString('hex')}`, daemons: [],
    removals: [cleanup.add(`folder ${dir}`, () => rmSync(dir, { recursive: true, force: true }))],
  };
  let result: ScaleOutOutcome | undefined;
  let failed = true;
  try {
    const schema = await BenchSchema.create(servers.pgUrl);
    rig.schema = schema;
    rig.removals.push(cleanup.add(`schema ${schema.name}`, () => schema.drop()));
    const broker = await BrokerWatch.open(servers.amqpUrl);
    rig.broker = broker;
    // Listed before any daemon declares them (the daemons are killed first, as they are listed later).
    rig.removals.push(cleanup.add(`queue ${rig.queue}`, () => broker.removeAndClose(rig.queue, [BENCH_CLIENT])));
    rig.simulator = await SimulatorProcess.start(RECEIPTS, cleanup);
    for (let i = 0; i < c.instances; i++) {
      rig.daemons.push(await DaemonProcess.start({
        dir: rig.dir, name: `instance-${i + 1}`, simulatorPort: rig.simulator.port, binds: c.bindsPerInstance, ratePerBind: c.ratePerBind,
        store: { kind: 'postgres', url: servers.pgUrl, schema: schema.name, instanceId: `bench-${i + 1}` },
        amqp: { url: servers.amqpUrl, queue: rig.queue, client: BENCH_CLIENT },
        cleanup,
      }));
    }
    const measured = await measure(c, servers, rig);
    const warningsBefore = rig.daemons.map((d) => d.warningCount);
    const exitCodes: Array<number | null> = [];
    for (const d of rig.daemons) exitCodes.push(await d.stop());
    measured.perInstance.forEach((p, i) => {
      p.exitCode = exitCodes[i] ?? null;
      p.warningsWhileStopping = rig.daemons[i]!.warningCount - warningsBefore[i]!;
    });
    result = { ...measured, loadAverage };
    failed = false;
  } catch (e) {
    result = { case: c.name, error: e instanceof Error ? e.message : String(e), cleanupProblems: [] };
  }
  result.cleanupProblems.push(...await cleanUp(rig, failed));
  return result;
}

/**
 * Stops (or, after a failure, kills) the processes, deletes the queues, drops the schema, removes
 * the folder. After a signal, the same removals may be under way already: each runs once.
 */
async function cleanUp(rig: Rig, failed: boolean): Promise<string[]> {
  const problems: string[] = [];
  for (const d of rig.daemons) await (failed ? d.kill() : d.stop());
  await (failed ? rig.simulator?.kill() : rig.simulator?.stop());
  for (const remove of [...rig.removals].reverse()) problems.push(...await remove());
  return problems;
}

interface Meters {
  daemons: CpuMeter[];
  waiting: CpuMeter[];
  simulator: CpuMeter;
  bench: CpuMeter;
  machine: CpuMeter;
  postgres: ReturnType<typeof serverMeter>;
  rabbitmq: ReturnType<typeof serverMeter>;
}

type Measured = Omit<ScaleOutCaseResult, 'loadAverage'>;

async function measure(c: ScaleOutCase, servers: ScaleOutServers, rig: Rig): Promise<Measured> {
  const { broker, schema, simulator, daemons, queue } = rig as Required<Rig>;
  await broker.depth(queue); // the daemons declared it: publishing to a missing queue would drop the requests
  const submitsBefore = (await simulator.counters()).totals.submitsReceived;
  let meters: Meters | undefined;
  const depth = new DepthSampler(broker, queue);
  const published = await publishOpenLoop({
    url: servers.amqpUrl, queue, ratePerSecond: c.offeredRate, seconds: c.seconds, channels: PUBLISH_CHANNELS, body: scaleOutBody,
    onStart: () => {
      meters = {
        daemons: daemons.map((d) => CpuMeter.ofPid(d.pid)), waiting: daemons.map((d) => CpuMeter.waitOfPid(d.pid)),
        simulator: CpuMeter.ofPid(simulator.pid), bench: CpuMeter.ofSelf(), machine: CpuMeter.ofMachine(),
        postgres: serverMeter('postgres', servers.pgUrl), rabbitmq: serverMeter('beam.smp', servers.amqpUrl),
      };
      depth.start();
    },
  });
  const deadlineMs = Math.max(60_000, (published.published / SLOWEST_DELIVERED_PER_SECOND) * 1000);
  process.stderr.write(`bench: published ${published.published} (${published.confirmed} confirmed, ${published.skipped} skipped) at ${published.publishedPerSecond}/s; waiting up to ${round(deadlineMs / 1000, 0)} s for DELIVERED …\n`);
  const outcome = await waitUntilDelivered(rig as Required<Rig>, published, deadlineMs, depth);
  const endedAt = performance.timeOrigin + performance.now();
  const cpu = readMeters(meters!);
  await depth.stop();
  const counters = await simulator.counters();
  const deadLettered = await broker.deadLettered(queue);
  const leftInQueue = await broker.depth(queue);
  const figures = deliveryFigures(await schema.messages(), published.publishedAt);
  const stuck = figures.delivered < figures.stored ? await schema.stuck() : undefined;
  const instances = await Promise.all(daemons.map((d) => instanceMetrics(d.http.port)));
  const first = published.firstPublishAt;
  const lastDelivered = figures.delivered > 0 ? figures.lastDeliveredAt : NaN;
  const measuredEnd = outcome === 'all DELIVERED' ? lastDelivered : endedAt;
  const smscSubmits = counters.totals.submitsReceived - submitsBefore;
  const cpuOfCase = { daemons: cpu.daemons.reduce((a, b) => a + b, 0), simulator: cpu.simulator, bench: cpu.bench, postgres: cpu.postgres, rabbitmq: cpu.rabbitmq, machine: cpu.machine };
  return {
    case: c.name, instances: c.instances, bindsPerInstance: c.bindsPerInstance, ratePerBind: c.ratePerBind, offeredRate: c.offeredRate, seconds: c.seconds,
    publish: publishSummary(published, PUBLISH_CHANNELS),
    deadLettered, leftInQueue, maxQueueDepth: depth.max,
    accepted: figures.stored, storedTwice: figures.storedTwice,
    notStored: Math.max(0, published.confirmed - deadLettered - figures.stored),
    acceptedPerSecond: perSecond(figures.stored, first, figures.lastStoredAt),
    delivered: figures.delivered, notDelivered: figures.notDelivered,
    deliveredPerSecond: perSecond(figures.delivered, first, lastDelivered),
    drainSeconds: round((measuredEnd - published.lastPublishAt) / 1000, 2),
    outcome, deadlineSeconds: round(deadlineMs / 1000, 0),
    publishToStoredMs: figures.publishToStored, acceptToDeliveredMs: figures.acceptToDelivered, publishToDeliveredMs: figures.publishToDelivered,
    smscSubmits, smscSubmitsPerSecond: perSecond(smscSubmits, first, measuredEnd),
    smscMaxOutstandingPerBind: counters.binds.reduce((m, b) => Math.max(m, b.maxOutstanding), 0),
    smscThrottled: counters.totals.throttled,
    perInstance: daemons.map((d, i) => ({
      instanceId: `bench-${i + 1}`, submits: instances[i]!.submits, receipts: instances[i]!.receipts, dispatched: instances[i]!.dispatched,
      cpuPercent: cpu.daemons[i]!, waitingPercent: cpu.waiting[i]!, peakRssMb: round(d.peakRssMb()),
      exitCode: null, warnings: d.warningCount, warningsWhileStopping: 0,
    })),
    cpuPercent: { ...cpuOfCase, others: cpu.postgres === null || cpu.rabbitmq === null ? null : Math.max(0, cpu.machine - cpuOfCase.daemons - cpu.simulator - cpu.bench - cpu.postgres - cpu.rabbitmq) },
    serverPids: { postgres: meters!.postgres?.pids ?? [], rabbitmq: meters!.rabbitmq?.pids ?? [] },
    daemonCpuUsPerMessage: round(cpu.daemonsCpuUs / Math.max(1, figures.stored), 1),
    benchCpuUsPerMessage: round(cpu.benchCpuUs / Math.max(1, published.published), 1),
    ...(stuck ? { stuck } : {}),
    firstWarnings: daemons.flatMap((d, i) => d.warnings.map((w) => `bench-${i + 1}: ${w}`)).slice(0, 20),
    cleanupProblems: [],
  };
}

function perSecond(count: number, fromMs: number, toMs: number): number {
  if (count === 0 || !Number.isFinite(toMs - fromMs)) return 0;
  return round((count * 1000) / Math.max(1, toMs - fromMs));
}

/**
 * Polls every 250 ms until every request the broker confirmed (less those dead-lettered) is
 * DELIVERED. The simulator's count of receipts answered ESME_ROK is the cheap gate (the daemon
 * answers a receipt after committing it); the store's count of DELIVERED requests decides.
 */
async function waitUntilDelivered(rig: Required<Rig>, published: PublishResult, deadlineMs: number, depth: DepthSampler): Promise<string> {
  const started = performance.now();
  let lastProgress = started;
  let lastOk = -1;
  let lastDepth = -1;
  let lastStoreCheck = 0;
  for (;;) {
    const now = performance.now();
    const ok = (await rig.simulator.counters()).totals.deliverSmResponses['ESME_ROK'] ?? 0;
    const want = published.confirmed - await rig.broker.deadLettered(rig.queue);
    if (ok !== lastOk || depth.last !== lastDepth) {
      lastProgress = now;
      lastOk = ok;
      lastDepth = depth.last;
    }
    if (ok >= want && now - lastStoreCheck >= 1000) {
      lastStoreCheck = now;
      if (await rig.schema.deliveredCount() >= want) return 'all DELIVERED';
    }
    const gone = rig.daemons.findIndex((d) => d.ended !== null);
    if (gone >= 0) return `gave up: instance bench-${gone + 1} exited (${rig.daemons[gone]!.ended})`;
    if (now - started >= deadlineMs) return `gave up at the deadline (${round(deadlineMs / 1000, 0)} s after the last publish)`;
    if (now - lastProgress >= STALL_MS) return `gave up: no receipt acknowledged and the queue unchanged for ${STALL_MS / 1000} s`;
    await sleep(250);
  }
}

/** The queue's ready messages, every second, from the first publish until stopped. */
class DepthSampler {
  max = 0;
  last = 0;
  #running = false;
  #loop: Promise<void> | undefined;

  constructor(private readonly broker: BrokerWatch, private readonly queue: string) {}

  start(): void {
    this.#running = true;
    this.#loop = (async () => {
      while (this.#running) {
        this.last = await this.broker.depth(this.queue).catch(() => this.last);
        this.max = Math.max(this.max, this.last);
        await sleep(1000);
      }
    })();
  }

  /** Resolves when the last sample is taken. */
  async stop(): Promise<void> {
    this.#running = false;
    await this.#loop;
  }
}

function readMeters(m: Meters): { daemons: number[]; waiting: number[]; simulator: number; bench: number; machine: number; postgres: number | null; rabbitmq: number | null; daemonsCpuUs: number; benchCpuUs: number } {
  const daemons = m.daemons.map((d) => d.elapsed());
  const bench = m.bench.elapsed();
  return {
    daemons: daemons.map(percentOfCore), waiting: m.waiting.map((w) => percentOfCore(w.elapsed())),
    simulator: percentOfCore(m.simulator.elapsed()), bench: percentOfCore(bench), machine: percentOfCore(m.machine.elapsed()),
    postgres: m.postgres ? percentOfCore(m.postgres.meter.elapsed()) : null, rabbitmq: m.rabbitmq ? percentOfCore(m.rabbitmq.meter.elapsed()) : null,
    daemonsCpuUs: daemons.reduce((a, d) => a + d.cpuUs, 0), benchCpuUs: bench.cpuUs,
  };
}

/** From the daemon's GET /metrics: submit_sm written by its binds, receipts by result, messages dispatched by way. */
async function instanceMetrics(port: number): Promise<{ submits: number; receipts: Record<string, number>; dispatched: Record<string, number> }> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    return {
      submits: sumByLabel(text, 'smppd_bind_submits_total', 'upstream')['sim'] ?? 0,
      receipts: sumByLabel(text, 'smppd_receipts_total', 'result'),
      dispatched: sumByLabel(text, 'smppd_dispatched_total', 'via'),
    };
  } catch {
    return { submits: NaN, receipts: {}, dispatched: {} };
  }
}

/** A counter's samples in Prometheus text, summed by the value of one label. */
export function sumByLabel(text: string, name: string, label: string): Record<string, number> {
  const sums: Record<string, number> = {};
  const pattern = new RegExp(`[{,]${label}="([^"]*)"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const key = pattern.exec(line)?.[1] ?? '';
    sums[key] = (sums[key] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sums;
}
