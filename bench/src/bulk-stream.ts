/**
 * The daemon benchmark's steady end-to-end case: sendbulk uploads of a few hundred numbers each,
 * made at a fixed rate whatever the answers do (open loop), as a sender that batches its traffic
 * would make them, until every message is DELIVERED. Unlike one large upload it keeps the queue
 * short, so accept→DELIVERED is the path's time, not the wait behind the rest of a file.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import type { DaemonCase, Measured } from './daemon-case.js';
import { cpuPercent, maxOutstanding, ReceiptSampler, startMeters, steadyRate, waitForReceipts } from './daemon-measure.js';
import type { DaemonUnderTest } from './harness.js';
import type { HttpTarget } from './load.js';
import { sleep } from './proc.js';
import { percentile, round } from './stats.js';

const BULK_REQUEST = { senderId: 'Bench', message: 'Your verification code is 123456. It expires in 10 minutes.', messageType: 'TEXT', allowDuplicate: false };

/** `c.offeredRate` numbers a second in uploads of `c.numbers`, for `c.seconds`; at most `c.concurrency` uploads unanswered (more are skipped and counted). */
export async function streamCase(c: DaemonCase, d: DaemonUnderTest): Promise<Measured> {
  const perUpload = c.numbers ?? 500;
  const rate = c.offeredRate ?? 10_000;
  const intervalMs = (perUpload * 1000) / rate;
  const meters = startMeters(d);
  const startedAt = performance.now();
  const sampler = new ReceiptSampler(d, startedAt);
  const endAt = startedAt + c.seconds * 1000;
  const latencies: number[] = [];
  const refused: Record<string, number> = {};
  const pending = new Set<Promise<void>>();
  let offered = 0;
  let accepted = 0;
  let skipped = 0;
  let errors = 0;
  for (let k = 0; startedAt + k * intervalMs < endAt; k++) {
    const wait = startedAt + k * intervalMs - performance.now();
    if (wait > 0) await sleep(wait);
    if (pending.size >= c.concurrency) {
      skipped += perUpload;
      continue;
    }
    offered += perUpload;
    const numbers = Array.from({ length: perUpload }, (_, i) => `4479${String(k * perUpload + i).padStart(8, '0')}`);
    const issuedAt = performance.now();
    const upload: Promise<void> = postBulkNumbers(d.http, numbers).then((answer) => {
      latencies.push(performance.now() - issuedAt);
      if (answer.status === 200) accepted += answer.validCount;
      else refused[answer.status] = (refused[answer.status] ?? 0) + 1;
    }, () => { errors++; }).finally(() => pending.delete(upload));
    pending.add(upload);
  }
  await Promise.all(pending);
  const loadEndedAt = performance.now();
  const lastDeliveredAt = await waitForReceipts(d, accepted, 60_000);
  const perSecond = await sampler.stop();
  const cpu = cpuPercent(meters);
  const counters = await d.simulatorCounters();
  const delivered = counters.totals.deliverSmResponses['ESME_ROK'] ?? 0;
  return {
    case: c.name, transport: 'tcp', binds: c.binds, ratePerBind: c.ratePerBind, seconds: c.seconds,
    load: `open loop, ${round(1000 / intervalMs, 1)} sendbulk/s of ${perUpload} numbers (${rate}/s), at most ${c.concurrency} unanswered`,
    offered, accepted, acceptedPerSecond: round((accepted * 1000) / (loadEndedAt - startedAt)),
    refused, errors, skipped,
    httpP50Ms: round(percentile(latencies, 50), 1), httpP99Ms: round(percentile(latencies, 99), 1),
    httpMaxMs: round(latencies.reduce((m, v) => Math.max(m, v), 0), 1),
    smscSubmitsPerSecond: round((counters.totals.submitsReceived - (await meters.submitsBefore)) / ((lastDeliveredAt - startedAt) / 1000)),
    smscMaxOutstandingPerBind: maxOutstanding(counters),
    e2e: {
      delivered, notDelivered: delivered < accepted ? { 'not DELIVERED in time': accepted - delivered } : {},
      deliveredPerSecond: round((delivered * 1000) / (lastDeliveredAt - startedAt)),
      perSecond: steadyRate(perSecond),
      drainSeconds: round((lastDeliveredAt - loadEndedAt) / 1000, 2),
      // From the store, once the daemon has stopped (runDaemonCase).
      acceptToDeliveredP50Ms: null, acceptToDeliveredP99Ms: null, acceptToDeliveredMaxMs: null,
      statusSample: 'not sampled',
    },
    daemonCpuUsPerMessage: round(cpu.daemonCpuUs / Math.max(1, accepted), 1),
    cpuPercent: cpu.percent,
    daemonPeakRssMb: round(d.peakRssMb()),
    ids: [],
  };
}

/** POST /sms/sendbulk with `numbers` as a TXT file made in memory; the answer's status and validCount. */
async function postBulkNumbers(target: HttpTarget, numbers: readonly string[]): Promise<{ status: number; validCount: number }> {
  const boundary = `----smppd-bench-${randomBytes(12).toString('hex')}`;
  const body = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="bulkRequest"\r\n\r\n${JSON.stringify(BULK_REQUEST)}\r\n`
    + `--${boundary}\r\nContent-Disposition: form-data; name="destinationNumberFile"; filename="numbers.txt"\r\nContent-Type: text/plain\r\n\r\n`
    + `${numbers.join('\n')}\n\r\n--${boundary}--\r\n`,
  );
  const res = await request(`http://127.0.0.1:${target.port}/sms/sendbulk`, {
    method: 'POST', body,
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, authorization: `Bearer ${target.token}` },
  });
  const answer = await res.body.json() as { bulkListInfo?: { validCount?: number } };
  return { status: res.statusCode, validCount: answer.bulkListInfo?.validCount ?? 0 };
}
