/**
 * The daemon benchmark: the whole daemon (`smppd start`) with the simulator in its own process,
 * driven over its HTTP API from the bench process. The cases: single sendSms ingest, one
 * 100,000-number sendbulk, and end to end to DELIVERED from single sendSms calls, from a stream
 * of small sendbulk uploads, and from one sendbulk (what the store, dispatcher, pool and
 * receipts carry when HTTP costs little per message).
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { SystemClock } from '../../src/core/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { streamCase } from './bulk-stream.js';
import { DaemonUnderTest, type DaemonSetup } from './harness.js';
import { getJson, postBulkFile, runSendSmsLoad, type LoadResult } from './load.js';
import { bulkLatencies, cpuPercent, maxOutstanding, ReceiptSampler, startMeters, steadyRate, waitForReceipts, type Meters } from './daemon-measure.js';
import { percentile, round } from './stats.js';
import type { DaemonCase, DaemonCaseResult, E2eFigures, E2eRun, Measured } from './daemon-case.js';

const CODE_TEXT = 'Your verification code is 123456. It expires in 10 minutes.';
/** 400 GSM-7 characters: three parts of 153 with a UDH. */
const LONG_TEXT = `Your order 123456 has shipped. ${'Track it at the link in your account. '.repeat(10)}`.slice(0, 400);

export const DAEMON_CASES: DaemonCase[] = [
  { name: 'daemon: HTTP ingest, single sendSms', kind: 'ingest', binds: 10, ratePerBind: 1000, seconds: 10, concurrency: 64 },
  { name: 'daemon: sendbulk, 100,000 numbers', kind: 'bulk', binds: 10, ratePerBind: 1000, seconds: 0, concurrency: 1, numbers: 100_000 },
  { name: 'daemon: end to end, 10 binds × 1,000/s', kind: 'e2e', binds: 10, ratePerBind: 1000, seconds: 10, concurrency: 256, offeredRate: 10_000 },
  // 200,000 numbers: twenty seconds of the binds' full pace, so the rate it holds is seen, not its start.
  { name: 'daemon: end to end from sendbulk uploads of 500 numbers, 10 binds × 1,000/s', kind: 'stream', binds: 10, ratePerBind: 1000, seconds: 20, concurrency: 8, offeredRate: 10_000, numbers: 500 },
  { name: 'daemon: end to end from one sendbulk, 10 binds × 1,000/s', kind: 'bulk', binds: 10, ratePerBind: 1000, seconds: 0, concurrency: 1, numbers: 200_000, untilDelivered: true },
  // Each accepted part but the last is stored on its own as it is accepted, its window slot kept till then.
  {
    name: 'daemon: end to end from one sendbulk of 3-part messages, 10 binds × 1,000/s', kind: 'bulk', binds: 10, ratePerBind: 1000, seconds: 0, concurrency: 1,
    numbers: 60_000, untilDelivered: true, text: { message: LONG_TEXT, parts: 3 },
  },
];

/** Runs one case; the daemon and simulator are stopped and the temporary folder deleted whatever happens. */
export async function runDaemonCase(c: DaemonCase): Promise<DaemonCaseResult> {
  const receipts = c.kind === 'e2e' || c.kind === 'stream' || c.untilDelivered === true;
  const setup: DaemonSetup = { binds: c.binds, ratePerBind: c.ratePerBind, receipts: receipts ? { min: 0, max: 50 } : false };
  const loadAverage = round(loadavg()[0] ?? 0, 2);
  const d = await DaemonUnderTest.start(setup);
  try {
    const measured = c.kind === 'bulk' ? await bulkCase(c, d) : c.kind === 'stream' ? await streamCase(c, d) : await loadCase(c, d);
    const warningsBeforeStop = d.warningCount;
    const exitCode = await d.stop();
    // The store is read after the daemon stopped: the one connection to it is then ours.
    const e2e = measured.e2eRun ? await deliveryFigures(d, measured.ids, measured.e2eRun)
      : measured.e2e ? { ...measured.e2e, ...await bulkLatencies(d) } : undefined;
    const { ids: _ids, e2eRun: _run, ...rest } = measured;
    return { ...rest, ...(e2e ? { e2e } : {}), loadAverage, daemonExitCode: exitCode,
      daemonWarnings: warningsBeforeStop, daemonWarningsWhileStopping: d.warningCount - warningsBeforeStop, firstWarnings: d.warnings,
    };
  } finally {
    await d.stop();
    d.remove();
  }
}

/** Cases 1 and 3: sendSms load (closed loop, or open loop at the offered rate). */
async function loadCase(c: DaemonCase, d: DaemonUnderTest): Promise<Measured> {
  let meters: Meters | undefined;
  const load: LoadResult = await runSendSmsLoad(d.http, {
    concurrency: c.concurrency, seconds: c.seconds, ratePerSecond: c.offeredRate ?? 0,
    // Case 1 warms the daemon up for a second first; in case 3 every message counts, so none is left out.
    warmupSeconds: c.kind === 'ingest' ? 1 : 0,
    onMeasureStart: () => { meters = startMeters(d); },
  });
  const loadEndedAt = performance.now();
  const submitsAfterLoad = (await d.simulatorCounters()).totals.submitsReceived;
  let run: E2eRun | undefined;
  if (c.kind === 'e2e') {
    const lastDeliveredAt = await waitForReceipts(d, load.accepted, Math.max(60_000, c.seconds * 6_000));
    run = { loadEndedAt, lastDeliveredAt, statusSample: await sampleStatus(d, load.ids, 20) };
  }
  const cpu = cpuPercent(meters!);
  const counters = await d.simulatorCounters();
  const loadSeconds = load.elapsedMs / 1000;
  const base = {
    case: c.name, transport: 'tcp' as const, binds: c.binds, ratePerBind: c.ratePerBind, seconds: c.seconds,
    load: c.offeredRate ? `open loop, ${c.offeredRate}/s offered, ${c.concurrency} connections` : `closed loop, ${c.concurrency} in flight`,
    offered: load.offered, accepted: load.accepted, acceptedPerSecond: load.acceptedPerSecond,
    refused: load.refused, errors: load.errors, skipped: load.skipped,
    httpP50Ms: load.p50Ms, httpP99Ms: load.p99Ms, httpMaxMs: load.maxMs,
    smscSubmitsPerSecond: round((submitsAfterLoad - (await meters!.submitsBefore)) / loadSeconds),
    smscMaxOutstandingPerBind: maxOutstanding(counters),
    daemonCpuUsPerMessage: round(cpu.daemonCpuUs / Math.max(1, load.accepted), 1),
    generatorCpuUsPerRequest: round(load.clientCpuUs / Math.max(1, load.offered), 1),
    cpuPercent: cpu.percent,
    daemonPeakRssMb: round(d.peakRssMb()),
    ids: load.ids,
  };
  return run ? { ...base, e2eRun: run } : base;
}

/** Case 2: one sendbulk of `numbers` distinct valid numbers. */
async function bulkCase(c: DaemonCase, d: DaemonUnderTest): Promise<Measured> {
  const count = c.numbers ?? 100_000;
  const file = join(d.dir, 'numbers.txt');
  const lines: string[] = [];
  for (let i = 0; i < count; i++) lines.push(`4478${String(i).padStart(8, '0')}`);
  const text = `${lines.join('\n')}\n`;
  writeFileSync(file, text);
  const meters = startMeters(d);
  const startedAt = performance.now();
  const sampler = c.untilDelivered ? new ReceiptSampler(d, startedAt) : undefined;
  const parts = c.text?.parts ?? 1;
  const upload = await postBulkFile(d.http, file, { senderId: 'Bench', message: c.text?.message ?? CODE_TEXT, messageType: 'TEXT', allowDuplicate: false });
  const answeredAt = performance.now();
  const answer = upload.body as { bulkSessionId?: string; bulkListInfo?: { total: number; validCount: number; invalidCount: number; duplicate: number } };
  const info = answer.bulkListInfo ?? { total: 0, validCount: 0, invalidCount: 0, duplicate: 0 };
  if (upload.status !== 200) process.stderr.write(`bench: sendbulk answered ${upload.status}: ${JSON.stringify(upload.body).slice(0, 400)}\n`);
  let e2e: E2eFigures | undefined;
  let measuredMs = upload.ms;
  if (c.untilDelivered && upload.status === 200) {
    const lastDeliveredAt = await waitForReceipts(d, info.validCount * parts, Math.max(60_000, info.validCount * parts * 2));
    const perSecond = (await sampler!.stop()).map((n) => Math.round(n / parts));
    // The daemon answers a receipt after committing it: acknowledged receipts are DELIVERED parts, a receipt a part.
    const delivered = Math.floor(((await d.simulatorCounters()).totals.deliverSmResponses['ESME_ROK'] ?? 0) / parts);
    e2e = {
      delivered, notDelivered: delivered < info.validCount ? { 'not DELIVERED in time': info.validCount - delivered } : {},
      deliveredPerSecond: round((delivered * 1000) / (lastDeliveredAt - startedAt)),
      perSecond: steadyRate(perSecond),
      drainSeconds: round((lastDeliveredAt - answeredAt) / 1000, 2),
      acceptToDeliveredP50Ms: null, acceptToDeliveredP99Ms: null, acceptToDeliveredMaxMs: null,
      statusSample: 'not sampled',
    };
    measuredMs = lastDeliveredAt - startedAt;
  }
  await sampler?.stop();
  const cpu = cpuPercent(meters);
  const counters = await d.simulatorCounters();
  return {
    ...(e2e ? { e2e } : {}),
    case: c.name, transport: 'tcp', binds: c.binds, ratePerBind: c.ratePerBind, seconds: round(upload.ms / 1000, 2),
    load: `1 upload, ${count} numbers (${round(Buffer.byteLength(text) / 1e6, 1)} MB)${parts > 1 ? `, ${parts} parts each` : ''}`,
    offered: count, accepted: info.validCount, acceptedPerSecond: round((info.validCount * 1000) / upload.ms),
    refused: upload.status === 200 ? {} : { [upload.status]: 1 }, errors: 0, skipped: 0,
    httpP50Ms: round(upload.ms), httpP99Ms: round(upload.ms), httpMaxMs: round(upload.ms),
    bulk: { status: upload.status, responseMs: round(upload.ms), ...info, bulkSessionId: answer.bulkSessionId ?? null },
    smscSubmitsPerSecond: round((counters.totals.submitsReceived - (await meters.submitsBefore)) / (measuredMs / 1000)),
    smscMaxOutstandingPerBind: maxOutstanding(counters),
    daemonCpuUsPerMessage: round(cpu.daemonCpuUs / Math.max(1, info.validCount), 1),
    cpuPercent: cpu.percent,
    daemonPeakRssMb: round(d.peakRssMb()),
    ids: [],
  };
}

async function sampleStatus(d: DaemonUnderTest, ids: string[], n: number): Promise<string> {
  const picked = Array.from({ length: Math.min(n, ids.length) }, (_, i) => ids[Math.floor((i * ids.length) / Math.min(n, ids.length))]!);
  let delivered = 0;
  for (const id of picked) {
    const { status, body } = await getJson<{ status?: string }>(d.http, `/sms/status/${encodeURIComponent(id)}`);
    if (status === 200 && body.status === 'DELIVERED') delivered++;
  }
  return `${delivered}/${picked.length}`;
}

/** After the daemon stopped: every accepted message read from its store. */
async function deliveryFigures(d: DaemonUnderTest, ids: string[], run: E2eRun): Promise<E2eFigures> {
  const store = await SqliteStore.open({ path: d.storePath, clock: new SystemClock() });
  const latencies: number[] = [];
  const notDelivered: Record<string, number> = {};
  let firstCreated = Infinity;
  let lastUpdated = -Infinity;
  try {
    for (const id of ids) {
      const m = await store.getMessage(id);
      const status = m?.status ?? 'MISSING';
      if (!m || status !== 'DELIVERED') {
        notDelivered[status] = (notDelivered[status] ?? 0) + 1;
        continue;
      }
      latencies.push(m.updatedAt - m.createdAt);
      firstCreated = Math.min(firstCreated, m.createdAt);
      lastUpdated = Math.max(lastUpdated, m.updatedAt);
    }
  } finally {
    await store.close();
  }
  return {
    delivered: latencies.length,
    notDelivered,
    deliveredPerSecond: latencies.length ? round((latencies.length * 1000) / Math.max(1, lastUpdated - firstCreated)) : 0,
    drainSeconds: round((run.lastDeliveredAt - run.loadEndedAt) / 1000, 2),
    acceptToDeliveredP50Ms: percentile(latencies, 50),
    acceptToDeliveredP99Ms: percentile(latencies, 99),
    acceptToDeliveredMaxMs: latencies.reduce((m, v) => Math.max(m, v), 0),
    statusSample: run.statusSample,
  };
}

export function renderDaemonTable(results: DaemonCaseResult[]): string {
  const header = ['case', 'binds × rate/bind', 'load', 'accepted', 'accepted/s', 'HTTP p50 / p99 ms', 'submit_sm/s at SMSC', 'delivered/s', 'accept→DELIVERED p50 / p99 ms', 'daemon CPU µs/msg', 'CPU % daemon / sim / bench / all (of 200)', 'daemon waiting for a core %', 'max outstanding/bind at SMSC', 'daemon peak RSS MB'];
  const rows = results.map((r) => [
    r.case, `${r.binds} × ${r.ratePerBind || 'unpaced'}`, r.load,
    r.bulk ? `${r.accepted} valid of ${r.bulk.total}` : String(r.accepted),
    String(r.acceptedPerSecond),
    r.bulk ? `${r.httpP50Ms} (one request)` : `${r.httpP50Ms} / ${r.httpP99Ms}`,
    String(r.smscSubmitsPerSecond),
    r.e2e ? `${r.e2e.deliveredPerSecond}${r.e2e.perSecond ? ` (median second ${r.e2e.perSecond.median})` : ''}` : '–',
    r.e2e?.acceptToDeliveredP50Ms != null ? `${r.e2e.acceptToDeliveredP50Ms} / ${r.e2e.acceptToDeliveredP99Ms}` : '–',
    String(r.daemonCpuUsPerMessage),
    `${r.cpuPercent.daemon} / ${r.cpuPercent.simulator} / ${r.cpuPercent.bench} / ${r.cpuPercent.machine}`,
    String(r.cpuPercent.daemonWaiting),
    String(r.smscMaxOutstandingPerBind), String(r.daemonPeakRssMb),
  ]);
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  const notes = results.map((r) => {
    const parts = [`load average ${r.loadAverage} at start`, `daemon exit ${r.daemonExitCode}`, `${r.daemonWarnings} warn/error log lines while measured, ${r.daemonWarningsWhileStopping} while stopping`];
    if (Object.keys(r.refused).length) parts.push(`refused ${JSON.stringify(r.refused)}`);
    if (r.errors) parts.push(`${r.errors} connection errors`);
    if (r.skipped) parts.push(`${r.skipped} requests not offered (over the generator's pending cap)`);
    if (r.offered && !r.bulk) parts.push(`offered ${round(r.offered / r.seconds)}/s`);
    if (r.generatorCpuUsPerRequest !== undefined) parts.push(`load generator ${r.generatorCpuUsPerRequest} µs CPU per request`);
    if (r.e2e) {
      const e = r.e2e;
      if (r.bulk) {
        parts.push(`${e.delivered} DELIVERED (receipts acknowledged) ${e.drainSeconds} s after the upload was answered; delivered/s counts from the start of the upload`);
        if (e.acceptToDeliveredP50Ms !== null) parts.push(`accept→DELIVERED (with the wait behind the rest of the upload) p50 ${e.acceptToDeliveredP50Ms} ms, p99 ${e.acceptToDeliveredP99Ms} ms`);
      } else {
        const sample = e.statusSample === 'not sampled' ? '' : `, status sample ${e.statusSample} DELIVERED`;
        parts.push(`${e.delivered} DELIVERED, drain ${e.drainSeconds} s after the load, accept→DELIVERED max ${e.acceptToDeliveredMaxMs} ms${sample}`);
      }
      if (e.perSecond) parts.push(`DELIVERED per second from the start, median ${e.perSecond.median} and lowest ${e.perSecond.min} without the first and the last second: ${e.perSecond.samples.join(' ')}`);
      if (Object.keys(r.e2e.notDelivered).length) parts.push(`not DELIVERED ${JSON.stringify(r.e2e.notDelivered)}`);
    }
    return `- ${r.case}: ${parts.join('; ')}`;
  });
  return [line(header), line(header.map(() => '---')), ...rows.map(line), '', ...notes].join('\n');
}
