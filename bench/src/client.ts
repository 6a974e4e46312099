import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { MAX_PENDING_DELIVERIES_DEFAULT } from '../../src/config/index.js';
import { silentLog, SystemClock } from '../../src/core/index.js';
import { type BindSettings, buildStatusTable, decodePdu, encodePdu, noEngineMetrics, Pool, submitSmDefaults, type SubmitSmPdu } from '../../src/smpp/index.js';
import { percentile, round } from './stats.js';

/** What one load-generator run reports (printed as one JSON line). */
export interface ClientResult {
  binds: number;
  ratePerBind: number;
  seconds: number;
  accepted: number;
  failed: number;
  totalRate: number;
  perBindRate: number[];
  /** The most submit_sm each bind wrote in any 1-second window (the pacing as sent). */
  sentMax1sPerBind: number[];
  p50Ms: number;
  p99Ms: number;
  cpuUsPerMessage: number;
  codecUsPerMessage: number;
  peakRssMb: number;
  /** With --pacing: the pool's pacing every 500 ms. */
  pacing?: PacingSample[];
}

/** The pool's pacing at `t` ms after the load started (`--pacing`). */
export interface PacingSample {
  t: number;
  /** Per bind, in the pool's order. */
  binds: Array<{ rate: number; learnedLimit: number | null; throttledSubmits: number; throttleEpisodes: number }>;
  /** The upstream's accountRate pacing; null without one. */
  account: { rate: number; learnedLimit: number | null; throttleEpisodes: number } | null;
}

/** How often --pacing reads the pool's stats (ms). */
const PACING_SAMPLE_MS = 500;

/**
 * The benchmark's load generator, run in its own process by the bench (`main.ts client`): a pool
 * of `binds` binds to the simulator, kept busy for `seconds` after every bind is up. With
 * `--pacing` it prints `{"event":"offering"}` when the load starts (the pacing cases time the
 * SMSC's changes from it) and reports the pool's pacing as it went.
 */
export async function runBenchClient(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' }, binds: { type: 'string', default: '1' }, rate: { type: 'string', default: '1000' },
      burst: { type: 'string', default: '20' }, window: { type: 'string', default: '100' }, seconds: { type: 'string', default: '10' },
      ca: { type: 'string' }, 'account-rate': { type: 'string', default: '0' }, pacing: { type: 'boolean', default: false },
    },
  });
  const clock = new SystemClock();
  const binds = Number(values.binds);
  const rate = Number(values.rate);
  const seconds = Number(values.seconds);
  const bindSettings: BindSettings[] = Array.from({ length: binds }, (_, index) => ({
    upstream: 'bench', index,
    connect: { host: '127.0.0.1', port: Number(values.port), connectTimeoutMs: 5_000, tls: values.ca ? { ca: readFileSync(values.ca), servername: 'localhost', rejectUnauthorized: true } : false },
    systemId: 'smppclient1', password: 'password', systemType: '', bindMode: 'transceiver', addressRange: '', addrTon: 0, addrNpi: 0,
    window: Number(values.window), responseTimeoutMs: 10_000, enquireLinkMs: 30_000,
    ratePerBind: rate, burst: Number(values.burst),
    throttle: { pauseMs: 0, minRate: 10, backoff: 0.03, probe: 0.01 },
    reconnect: { initialMs: 100, maxMs: 1_000, multiplier: 2 },
    maxPendingDeliveries: MAX_PENDING_DELIVERIES_DEFAULT,
  }));
  const pool = new Pool({
    upstreams: [{
      name: 'bench', binds: bindSettings, accountRate: Number(values['account-rate']), onUncertain: 'resend', maxAttempts: 5,
      retryBackoff: { initialMs: 100, maxMs: 1_000, multiplier: 2 },
      maxQueued: Math.max(200, Number(values.window) * binds * 2), statusTable: buildStatusTable(),
    }],
    clock, log: silentLog, metrics: noEngineMetrics,
  });
  pool.start();
  while (pool.stats().some((b) => b.state !== 'bound')) await new Promise((r) => clock.setTimer(5, () => r(undefined)));

  const text = Buffer.from('Your verification code is 123456. It expires in 10 minutes.', 'latin1');
  const template = { ...submitSmDefaults(), sourceAddr: 'Bench', dataCoding: 0, shortMessage: text };
  const bindIndex = new Map(pool.stats().map((b, i) => [b.id, i]));
  const doneAt: number[][] = Array.from({ length: binds }, () => []);
  const latencies: number[] = [];
  let failed = 0;
  let n = 0;
  let running = true;
  const start = clock.now();
  const cpuStart = process.cpuUsage();
  const end = start + seconds * 1000;

  const offer = (): void => {
    while (running && pool.accepting('bench')) {
      const dest = `49151${String(n++ % 10_000_000).padStart(7, '0')}`;
      void pool.submit('bench', [{ ...template, destinationAddr: dest }]).then((o) => {
        const p = o.parts[0]!;
        const now = clock.now();
        if (p.kind !== 'accepted') { failed++; return; }
        if (now > end) return;
        doneAt[bindIndex.get(p.bind)!]!.push(now);
        latencies.push(p.latencyMs);
      });
    }
  };
  const pacing: PacingSample[] = [];
  const samplePacing = (): void => {
    if (!running) return;
    const account = pool.accountStats()[0];
    pacing.push({
      t: round(clock.now() - start, 0),
      binds: pool.stats().map((b) => ({ rate: b.rate, learnedLimit: b.learnedLimit, throttledSubmits: b.throttledSubmits, throttleEpisodes: b.throttleEpisodes })),
      account: account ? { rate: account.rate, learnedLimit: account.learnedLimit, throttleEpisodes: account.throttleEpisodes } : null,
    });
    clock.setTimer(PACING_SAMPLE_MS, samplePacing);
  };
  if (values.pacing) {
    process.stdout.write(`${JSON.stringify({ event: 'offering' })}\n`);
    samplePacing();
  }
  const unsubscribe = pool.onDrain(() => offer());
  offer();
  await new Promise((r) => clock.setTimer(seconds * 1000, () => r(undefined)));
  if (values.pacing) samplePacing();
  running = false;
  const cpu = process.cpuUsage(cpuStart);
  const sentMax = pool.stats().map((b) => b.maxSentPerSecond);
  unsubscribe();
  await pool.stop(5_000);

  const accepted = doneAt.reduce((s, d) => s + d.length, 0);
  const result: ClientResult = {
    binds, ratePerBind: rate, seconds, accepted, failed,
    totalRate: round(accepted / seconds),
    perBindRate: doneAt.map((d) => round(d.length / seconds)),
    sentMax1sPerBind: sentMax,
    p50Ms: round(percentile(latencies, 50), 2),
    p99Ms: round(percentile(latencies, 99), 2),
    cpuUsPerMessage: round((cpu.user + cpu.system) / Math.max(1, accepted), 2),
    codecUsPerMessage: round(codecCost({ ...template, destinationAddr: '4915100000000', sequenceNumber: 1 }), 2),
    peakRssMb: round(process.resourceUsage().maxRSS / 1024),
    ...(values.pacing ? { pacing } : {}),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return 0;
}

/** CPU µs the codec spends per message on the client: encode submit_sm, decode submit_sm_resp. */
function codecCost(pdu: SubmitSmPdu): number {
  const resp = encodePdu({ command: 'submit_sm_resp', sequenceNumber: 1, commandStatus: 0, messageId: '0123456789abcdef' });
  const rounds = 20_000;
  const t0 = process.cpuUsage();
  for (let i = 0; i < rounds; i++) {
    encodePdu({ ...pdu, sequenceNumber: i + 1 });
    decodePdu(resp);
  }
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / rounds;
}
