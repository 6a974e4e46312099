/**
 * The webhook benchmark: status changes are made in the store at a paced rate (each message
 * SUBMITTED at accept, SENT by its submit outcome, DELIVERED by its receipt: three events), and
 * the webhook dispatcher delivers them over HTTP to a receiver in the benchmark's own process. It
 * reports the events delivered per second, the outbox depth over the run, the time from change
 * to acknowledgement and the CPU per event of the smppd side.
 *
 * The smppd side runs in its own process (`main.ts webhooks`) with the store on its worker
 * thread, as the daemon has it; SMPP is left out, so the figure is the outbox and its delivery,
 * not the binds.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { silentLog, SystemClock, uuidV7 } from '../../src/core/index.js';
import { EventDispatcher, type EventMetrics, WebhookClient } from '../../src/events/index.js';
import { SqliteWorkerStore } from '../../src/store/sqlite/index.js';
import type { NewMessage } from '../../src/store/index.js';
import { benchMain } from './paths.js';
import { exitOf } from './proc.js';
import { percentile, round } from './stats.js';

export interface WebhookCase {
  name: string;
  /** Status changes made per second (a third of it in messages). */
  changesPerSecond: number;
  seconds: number;
  concurrency: number;
}

export const WEBHOOK_CASES: WebhookCase[] = [
  { name: 'webhooks: 10,000 status changes/s, concurrency 32', changesPerSecond: 10_000, seconds: 20, concurrency: 32 },
  { name: 'webhooks: 5,000 status changes/s, concurrency 32', changesPerSecond: 5_000, seconds: 20, concurrency: 32 },
  { name: 'webhooks: 3,000 status changes/s, concurrency 32', changesPerSecond: 3_000, seconds: 20, concurrency: 32 },
];

/** What the smppd side reports (one JSON line). */
export interface WebhookSideResult {
  seconds: number;
  changesMade: number;
  changesPerSecond: number;
  delivered: number;
  deliveredPerSecond: number;
  /** Change to 2xx, ms. */
  p50Ms: number;
  p99Ms: number;
  maxOutboxDepth: number;
  /** Sampled each second. */
  depthSamples: number[];
  /** After the changes stopped, until the outbox was empty (null: it did not empty in 30 s). */
  drainMs: number | null;
  cpuUsPerEvent: number;
}

export interface WebhookCaseResult extends WebhookSideResult {
  case: string;
  targetChangesPerSecond: number;
  concurrency: number;
  receiverRequests: number;
  receiverCpuUsPerRequest: number;
}

const TICK_MS = 10;
const CLIENT = 'bench';

/** Runs one case: the receiver here, the smppd side in a child process. */
export async function runWebhookCase(c: WebhookCase): Promise<WebhookCaseResult> {
  let requests = 0;
  const server: Server = createServer((req, res) => {
    req.on('data', () => {});
    req.on('end', () => {
      requests++;
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const cpuBefore = process.cpuUsage();
  try {
    const child = spawn(process.execPath, [benchMain, 'webhooks', '--url', `http://127.0.0.1:${port}/hook`, '--rate', String(c.changesPerSecond),
      '--seconds', String(c.seconds), '--concurrency', String(c.concurrency)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    const code = await exitOf(child);
    if (code !== 0) throw new Error(`the webhook side exited with ${code}`);
    const side = JSON.parse(out.trim().split('\n').at(-1)!) as WebhookSideResult;
    const cpu = process.cpuUsage(cpuBefore);
    return {
      case: c.name, targetChangesPerSecond: c.changesPerSecond, concurrency: c.concurrency, ...side,
      receiverRequests: requests, receiverCpuUsPerRequest: round((cpu.user + cpu.system) / Math.max(1, requests)),
    };
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

/** `main.ts webhooks`: the smppd side of a case. Prints one JSON line. */
export async function runWebhookBenchSide(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { url: { type: 'string' }, rate: { type: 'string', default: '10000' }, seconds: { type: 'string', default: '20' }, concurrency: { type: 'string', default: '32' } },
  });
  const rate = Number(values.rate);
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  const clock = new SystemClock();
  const dir = mkdtempSync(join(tmpdir(), 'smppd-bench-webhooks-'));
  const store = await SqliteWorkerStore.open({ path: join(dir, 'smppd.db') });
  const latencies: number[] = [];
  let delivered = 0;
  const metrics: EventMetrics = {
    webhookAttempt: () => {},
    eventDelivered: (_client, _kind, s) => { delivered++; latencies.push(s * 1000); },
    eventDead: () => {},
    eventsSuperseded: () => {},
  };
  const events = new EventDispatcher({
    store, clock, log: silentLog, metrics,
    clients: [{
      name: CLIENT, sink: new WebhookClient({ url: values.url!, timeoutMs: 10_000, concurrency }, { clock, userAgent: 'smppd-bench' }),
      concurrency, retry: { initialMs: 1_000, maxMs: 30_000, multiplier: 2 }, maxAgeMs: 3_600_000, leaseMs: 60_000,
    }],
  });
  events.start();

  let messagesMade = 0;
  let changesMade = 0;
  let inProgress = 0;
  const started = clock.now();
  const cpuStart = process.cpuUsage();
  // One chain per tick: accept the tick's messages, claim them, record their submits, then their receipts.
  const chain = async (count: number): Promise<void> => {
    inProgress++;
    try {
      const now = clock.wallNow();
      const messages = Array.from({ length: count }, () => benchMessage(uuidV7(now)));
      await store.accept({ messages, now });
      changesMade += count;
      const claimed = await store.claim('bench', clock.wallNow(), count);
      await Promise.all(claimed.map((m, i) => store.recordSubmit(m.id, [{
        part: 1, kind: 'accepted', smscId: `${m.id}-smsc`, matchKey: `k${m.id}`, bind: 'b', attempts: 1,
      }], clock.wallNow()).then(() => { changesMade++; return i; })));
      await Promise.all(claimed.map((m) => store.applyReceipt({
        upstream: 'bench', keys: [`k${m.id}`], status: 'DELIVERED', reason: null, raw: { stat: 'DELIVRD' }, receivedAt: clock.wallNow(),
      }).then(() => { changesMade++; })));
    } finally {
      inProgress--;
    }
  };
  const depthSamples: number[] = [];
  const depth = async (): Promise<number> => (await store.outboxDepth()).reduce((n, d) => n + d.pending, 0);
  await new Promise<void>((done) => {
    let nextSample = started + 1_000;
    const tick = (): void => {
      const elapsed = clock.now() - started;
      if (elapsed >= seconds * 1000) return done();
      const due = Math.floor((elapsed / 1000) * (rate / 3)) - messagesMade;
      // A store that falls behind gets no more than a few ticks of work at once: what it cannot
      // take shows as a lower rate made, not as a pile of calls.
      if (due > 0 && inProgress < 8) {
        messagesMade += due;
        void chain(due);
      }
      if (clock.now() >= nextSample) {
        nextSample += 1_000;
        void depth().then((d) => depthSamples.push(d));
      }
      clock.setTimer(TICK_MS, tick);
    };
    tick();
  });
  const madeSeconds = (clock.now() - started) / 1000;
  const deliveredInRun = delivered;
  const stopAt = clock.now();
  let drainMs: number | null = null;
  // Delivered events are counted as they are acknowledged: no store reads while it drains.
  while (clock.now() - stopAt < 30_000) {
    if (inProgress === 0 && delivered >= changesMade) {
      drainMs = Math.round(clock.now() - stopAt);
      break;
    }
    await new Promise<void>((r) => clock.setTimer(50, r));
  }
  const cpu = process.cpuUsage(cpuStart);
  await events.stop();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  const result: WebhookSideResult = {
    seconds: round(madeSeconds),
    changesMade,
    changesPerSecond: Math.round(changesMade / madeSeconds),
    delivered,
    deliveredPerSecond: Math.round(deliveredInRun / madeSeconds),
    p50Ms: round(percentile(latencies, 50)),
    p99Ms: round(percentile(latencies, 99)),
    maxOutboxDepth: Math.max(0, ...depthSamples),
    depthSamples,
    drainMs,
    cpuUsPerEvent: round((cpu.user + cpu.system) / Math.max(1, delivered)),
  };
  console.log(JSON.stringify(result));
  return 0;
}

function benchMessage(id: string): NewMessage {
  return {
    id, client: CLIENT, events: true, upstream: 'bench', route: null, source: 'BENCH', destination: '447700900123', text: 'hello',
    messageType: 'TEXT', encoding: 'GSM-7', campaignName: null, registeredDelivery: 1, sourceTon: 5, sourceNpi: 0, destTon: 1,
    destNpi: 1, validityPeriod: '', expiresAt: null, notBefore: null,
    parts: [{ dataCoding: 0, esmClass: 0, shortMessage: Buffer.from('hello', 'latin1') }],
  };
}

export function renderWebhookTable(results: WebhookCaseResult[]): string {
  const header = ['case', 'changes/s made', 'events delivered/s', 'outbox depth max (per-second samples)', 'drain after stop ms', 'change→2xx p50 / p99 ms', 'smppd CPU µs/event', 'receiver CPU µs/request'];
  const rows = results.map((r) => [
    r.case, String(r.changesPerSecond), String(r.deliveredPerSecond), `${r.maxOutboxDepth}`, r.drainMs === null ? '> 30000' : String(r.drainMs),
    `${r.p50Ms} / ${r.p99Ms}`, String(r.cpuUsPerEvent), String(r.receiverCpuUsPerRequest),
  ]);
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}
