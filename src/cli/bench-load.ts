/**
 * The daemon benchmark's HTTP client, run in the bench process: single sendSms calls over
 * keep-alive connections, closed loop (a fixed number of requests in flight) or open loop (a
 * target rate, whatever the answers do), and one streamed multipart sendbulk upload.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import { Agent, request, type IncomingMessage } from 'node:http';
import { once } from 'node:events';
import { percentile, round } from './bench-stats.js';
import { CpuMeter, sleep } from './bench-proc.js';

/** Where the daemon's HTTP API listens and who we are to it. */
export interface HttpTarget {
  port: number;
  token: string;
}

export interface LoadSettings {
  /** Keep-alive connections (the agent's maxSockets); in closed loop also the requests in flight. */
  concurrency: number;
  /** Measured seconds. */
  seconds: number;
  /** Requests per second offered in open loop; 0 = closed loop (each connection sends again when answered). */
  ratePerSecond: number;
  /** Seconds of load before the measurement starts (not counted). Default 0. */
  warmupSeconds?: number;
  /**
   * Open loop: requests issued but unanswered above which the generator skips (and counts)
   * instead of queueing more in the agent. Default `concurrency`: latency then is the daemon's,
   * not the time a request waited for a free connection.
   */
  maxPending?: number;
  /** Called once when the measured part begins (after the warm-up). */
  onMeasureStart?: () => void;
}

export interface LoadResult {
  /** Requests issued in the measured seconds. */
  offered: number;
  /** 200 answers to them. */
  accepted: number;
  /** Other HTTP answers, by status code. */
  refused: Record<string, number>;
  /** Requests that failed without an answer (connection errors). */
  errors: number;
  /** Open loop: requests not issued because `maxPending` were unanswered (the daemon fell behind). */
  skipped: number;
  /** From the start of the measured part to the last answer of a request issued in it. */
  elapsedMs: number;
  offeredPerSecond: number;
  acceptedPerSecond: number;
  /** Request latency, issue to complete answer (time queued in the agent included). */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The ids answered (the 200 bodies), in answer order. */
  ids: string[];
  /** The bench process's CPU over the measured part, µs. */
  clientCpuUs: number;
}

interface Answer {
  status: number;
  body: string;
}

const TEXT = 'Your verification code is 123456. It expires in 10 minutes.';

/** The sendSms body of the n-th request: a distinct, valid number per request. */
export function sendSmsBody(n: number): string {
  return JSON.stringify({ senderId: 'Bench', destinationNumber: `4477${String(n % 1e9).padStart(9, '0')}`, message: TEXT, messageType: 'TEXT' });
}

/** Runs sendSms load against the daemon and measures what it answered. */
export async function runSendSmsLoad(target: HttpTarget, s: LoadSettings): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: s.concurrency });
  const maxPending = s.maxPending ?? s.concurrency;
  const latencies: number[] = [];
  const ids: string[] = [];
  const refused: Record<string, number> = {};
  let n = 0;
  let pending = 0;
  let errors = 0;
  let skipped = 0;
  let offered = 0;
  let measuring = false;
  let lastAnswer = 0;
  let measureFrom = 0;
  let cpu = CpuMeter.ofSelf();

  const issue = (): Promise<void> => {
    const counted = measuring;
    const t0 = performance.now();
    if (counted) offered++;
    pending++;
    return post(agent, target, '/sms/sendSms', sendSmsBody(n++)).then((a) => {
      const t1 = performance.now();
      if (!counted) return;
      lastAnswer = t1;
      if (a.status === 200) {
        latencies.push(t1 - t0);
        ids.push(a.body);
      } else {
        refused[a.status] = (refused[a.status] ?? 0) + 1;
      }
    }, () => {
      if (counted) errors++;
    }).finally(() => {
      pending--;
    });
  };

  const begin = (): void => {
    measuring = true;
    measureFrom = performance.now();
    lastAnswer = measureFrom;
    cpu = CpuMeter.ofSelf();
    s.onMeasureStart?.();
  };
  // Every connection is opened before the load starts, as a client's warm pool would be. A
  // daemon whose event loop is saturated takes new connections off its listen queue slowly
  // (seen: 210 of 256 still queued after 4 s), so connections opened under load measure that,
  // not the requests.
  await openConnections(agent, target, s.concurrency);
  const warmupMs = (s.warmupSeconds ?? 0) * 1000;
  const start = performance.now();
  const stopAt = start + warmupMs + s.seconds * 1000;
  if (warmupMs === 0) begin();

  if (s.ratePerSecond === 0) {
    const worker = async (): Promise<void> => {
      for (;;) {
        const now = performance.now();
        if (now >= stopAt) return;
        if (!measuring && now - start >= warmupMs) begin();
        await issue();
      }
    };
    await Promise.all(Array.from({ length: s.concurrency }, () => worker()));
  } else {
    // Open loop: every millisecond or so, issue what the schedule says is due by now.
    let due = 0;
    let ticked = start;
    for (let now = start; now < stopAt; now = performance.now()) {
      if (!measuring && now - start >= warmupMs) begin();
      due += ((now - ticked) * s.ratePerSecond) / 1000;
      ticked = now;
      for (; due >= 1; due--) {
        if (pending >= maxPending) {
          if (measuring) skipped++;
          continue;
        }
        void issue();
      }
      await sleep(1);
    }
    while (pending > 0) await sleep(5);
  }
  const { cpuUs } = cpu.elapsed();
  agent.destroy();
  const elapsedMs = Math.max(1, lastAnswer - measureFrom);
  return {
    offered, accepted: ids.length, refused, errors, skipped, elapsedMs: round(elapsedMs),
    offeredPerSecond: round(offered / s.seconds),
    acceptedPerSecond: round((ids.length * 1000) / elapsedMs),
    p50Ms: round(percentile(latencies, 50), 2),
    p99Ms: round(percentile(latencies, 99), 2),
    maxMs: round(latencies.reduce((m, v) => Math.max(m, v), 0), 1),
    ids,
    clientCpuUs: cpuUs,
  };
}

function post(agent: Agent, target: HttpTarget, path: string, body: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({
      agent, host: '127.0.0.1', port: target.port, path, method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${target.token}` },
    }, (res) => collect(res, resolve, reject));
    req.on('error', reject);
    req.end(body);
  });
}

/** `n` requests at once, so that the agent opens `n` keep-alive connections (GET of an unknown id: 404, no store write). */
async function openConnections(agent: Agent, target: HttpTarget, n: number): Promise<void> {
  await Promise.all(Array.from({ length: n }, () => getJson(target, '/sms/status/bench-connect', agent).catch(() => undefined)));
}

/** GET a JSON document from the daemon (GET /sms/status/:id). */
export function getJson<T>(target: HttpTarget, path: string, agent?: Agent): Promise<{ status: number; body: T }> {
  return new Promise((resolve, reject) => {
    const req = request({ agent, host: '127.0.0.1', port: target.port, path, method: 'GET', headers: { authorization: `Bearer ${target.token}` } }, (res) =>
      collect(res, (a) => {
        try {
          resolve({ status: a.status, body: JSON.parse(a.body) as T });
        } catch (e) {
          reject(e);
        }
      }, reject));
    req.on('error', reject);
    req.end();
  });
}

function collect(res: IncomingMessage, resolve: (a: Answer) => void, reject: (e: Error) => void): void {
  let body = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => { body += chunk; });
  res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
  res.on('error', reject);
}

export interface BulkUpload {
  status: number;
  /** The parsed answer (the bulk response, or the error body). */
  body: unknown;
  /** From the first byte sent to the whole answer read. */
  ms: number;
}

/**
 * POST /sms/sendbulk with `bulkRequest` first and then the file, streamed from disk as the body
 * (Content-Length set, so the daemon can refuse an oversized upload before reading it).
 */
export async function postBulkFile(target: HttpTarget, file: string, bulkRequest: object): Promise<BulkUpload> {
  const boundary = `----smppd-bench-${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="bulkRequest"\r\n\r\n${JSON.stringify(bulkRequest)}\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="destinationNumberFile"; filename="numbers.txt"\r\nContent-Type: text/plain\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const length = head.length + statSync(file).size + tail.length;
  const t0 = performance.now();
  const answer = new Promise<Answer>((resolve, reject) => {
    const req = request({
      host: '127.0.0.1', port: target.port, path: '/sms/sendbulk', method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': length, authorization: `Bearer ${target.token}` },
    }, (res) => collect(res, resolve, reject));
    req.on('error', reject);
    void (async () => {
      req.write(head);
      for await (const chunk of createReadStream(file)) {
        if (!req.write(chunk as Buffer)) await once(req, 'drain');
      }
      req.end(tail);
    })().catch(reject);
  });
  const a = await answer;
  const ms = performance.now() - t0;
  let body: unknown = a.body;
  try {
    body = JSON.parse(a.body);
  } catch {
    // not JSON: keep the text
  }
  return { status: a.status, body, ms };
}
