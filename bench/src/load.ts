/**
 * The daemon benchmark's HTTP client, run in the bench process: single sendSms calls over
 * keep-alive connections, closed loop (a fixed number of requests in flight) or open loop (a
 * target rate, whatever the answers do), and one streamed multipart sendbulk upload.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import { Readable } from 'node:stream';
import { request, type Dispatcher } from 'undici';
import { KeepAlivePool, type RequestOutcomes } from './http-client.js';
import { percentile, round } from './stats.js';
import { CpuMeter, sleep } from './proc.js';

/** Where the daemon's HTTP API listens and who we are to it. */
export interface HttpTarget {
  port: number;
  token: string;
}

export interface LoadSettings {
  /** Keep-alive connections (the pool's size); in closed loop also the requests in flight. */
  concurrency: number;
  /** Measured seconds. */
  seconds: number;
  /** Requests per second offered in open loop; 0 = closed loop (each connection sends again when answered). */
  ratePerSecond: number;
  /** Seconds of load before the measurement starts (not counted). Default 0. */
  warmupSeconds?: number;
  /**
   * Open loop: requests issued but unanswered above which the generator skips (and counts)
   * instead of queueing more in the pool. Default `concurrency`: latency then is the daemon's,
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
  /** Requests that failed without an answer (connection errors, or an answer the client could not read). */
  errors: number;
  /** Open loop: requests not issued because `maxPending` were unanswered (the daemon fell behind). */
  skipped: number;
  /** From the start of the measured part to the last answer of a request issued in it. */
  elapsedMs: number;
  offeredPerSecond: number;
  acceptedPerSecond: number;
  /** Request latency, issue to complete answer (time queued in the pool included). */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The ids answered (the 200 bodies), in answer order. */
  ids: string[];
  /** The bench process's CPU over the measured part, µs. */
  clientCpuUs: number;
}

const TEXT = 'Your verification code is 123456. It expires in 10 minutes.';
const BODY_HEAD = '{"senderId":"Bench","destinationNumber":"4477';
const BODY_TAIL = `","message":${JSON.stringify(TEXT)},"messageType":"TEXT"}`;

/** The sendSms body of the n-th request: a distinct, valid number per request. */
export function sendSmsBody(n: number): string {
  return `${BODY_HEAD}${String(n % 1e9).padStart(9, '0')}${BODY_TAIL}`;
}

/**
 * The bytes of the sendSms requests: the head built once per run, then the n-th body after it,
 * one Buffer per request (written to the socket as is).
 */
class SendSmsRequests {
  readonly #head: Buffer;
  readonly #bodyLength: number;

  constructor(target: HttpTarget) {
    const sample = sendSmsBody(0);
    // The bodies differ only in nine digits, and are ASCII: one length for all (checked per
    // request), in bytes as in characters.
    if (Buffer.byteLength(sample) !== sample.length) throw new Error('sendSmsBody is not ASCII');
    this.#bodyLength = sample.length;
    this.#head = Buffer.from(
      `POST /sms/sendSms HTTP/1.1\r\nhost: ${host(target)}\r\ncontent-type: application/json\r\n` +
      `authorization: Bearer ${target.token}\r\ncontent-length: ${this.#bodyLength}\r\n\r\n`,
    );
  }

  /** The n-th request. */
  build(n: number): Buffer {
    const body = sendSmsBody(n);
    if (body.length !== this.#bodyLength) throw new Error(`sendSmsBody(${n}) is ${body.length} characters, not ${this.#bodyLength}`);
    const bytes = Buffer.allocUnsafe(this.#head.length + this.#bodyLength);
    this.#head.copy(bytes, 0);
    bytes.write(body, this.#head.length, 'latin1');
    return bytes;
  }
}

/** Runs sendSms load against the daemon and measures what it answered. */
export async function runSendSmsLoad(target: HttpTarget, s: LoadSettings): Promise<LoadResult> {
  const load = new SendSmsLoad(target, s);
  try {
    // Every connection is opened before the load starts, as a client's warm pool would be. A
    // daemon whose event loop is saturated takes new connections off its listen queue slowly, so
    // connections opened under load measure that, not the requests. Each is used once (GET of an unknown id: 404, no store write).
    await load.pool.open(Buffer.from(
      `GET /sms/status/bench-connect HTTP/1.1\r\nhost: ${host(target)}\r\nauthorization: Bearer ${target.token}\r\n\r\n`,
    ));
    load.start();
    await (s.ratePerSecond === 0 ? load.runClosedLoop() : load.runOpenLoop());
    return load.result();
  } finally {
    load.pool.destroy();
  }
}

/**
 * One run of `runSendSmsLoad`. The generator shares the machine with the daemon it measures, so
 * a request costs little here: one Buffer written on a keep-alive connection of our own client
 * (http-client.ts: no promise, no handler object, no stream per request), the answer
 * reported by a call with numbers, latencies in a typed array.
 */
class SendSmsLoad implements RequestOutcomes {
  readonly pool: KeepAlivePool;
  readonly #s: LoadSettings;
  readonly #requests: SendSmsRequests;
  readonly #maxPending: number;
  readonly #warmupMs: number;
  #start = 0;
  #stopAt = 0;
  readonly #latencies: LatencyLog;
  readonly #ids: string[] = [];
  readonly #refused: Record<string, number> = {};
  #n = 0;
  #pending = 0;
  #offered = 0;
  #errors = 0;
  #skipped = 0;
  #measuring = false;
  #measureFrom = 0;
  #lastAnswer = 0;
  #cpu = CpuMeter.ofSelf();
  /** Open loop: the loop waiting for an answer. */
  #waiting: (() => void) | undefined;
  /** Closed loop: the requests still going round, and what to call when the last one stops. */
  #looping = 0;
  #loopDone: (() => void) | undefined;

  constructor(target: HttpTarget, s: LoadSettings) {
    this.pool = new KeepAlivePool('127.0.0.1', target.port, s.concurrency, this);
    this.#s = s;
    this.#requests = new SendSmsRequests(target);
    this.#maxPending = s.maxPending ?? s.concurrency;
    this.#warmupMs = (s.warmupSeconds ?? 0) * 1000;
    // Open loop: room for all the schedule offers in the measured part; closed loop: it grows.
    this.#latencies = new LatencyLog(s.ratePerSecond > 0 ? Math.ceil(s.ratePerSecond * s.seconds) + 1024 : 65_536);
  }

  /** The clock of the run starts (the connections are open). */
  start(): void {
    const s = this.#s;
    this.#start = performance.now();
    this.#stopAt = this.#start + this.#warmupMs + s.seconds * 1000;
    // The measured part begins when the warm-up ends, answers or none: a daemon that answers
    // nothing then is measured as such.
    if (this.#warmupMs === 0) this.#begin();
    else setTimeout(() => { if (!this.#measuring) this.#begin(); }, this.#warmupMs);
  }

  /** Each of `concurrency` requests is sent again as soon as it is answered, until the time is up. */
  runClosedLoop(): Promise<void> {
    return new Promise((resolve) => {
      this.#loopDone = resolve;
      this.#looping = this.#s.concurrency;
      for (let i = 0; i < this.#s.concurrency; i++) this.#sendAgain();
    });
  }

  /**
   * Every millisecond or so, issues what the schedule says is due by now; then waits for the
   * answers. While `maxPending` are unanswered nothing can be issued, so the loop then waits for
   * an answer instead of a timer: a wake-up costs the generator about as much CPU as a request,
   * and a daemon that is behind keeps the loop there for most of the run.
   */
  async runOpenLoop(): Promise<void> {
    // The end of the schedule also wakes a loop that waits for an answer (a timer may fire a
    // little before performance.now() reaches stopAt: the flag, not the clock, ends that wait).
    let ended = false;
    void sleep(this.#stopAt - this.#start).then(() => {
      ended = true;
      this.#wake();
    });
    let due = 0;
    let ticked = this.#start;
    const warmupEnd = this.#start + this.#warmupMs;
    for (;;) {
      // Up to the end of the schedule and no further: a wait for an answer may run past it.
      const now = ended ? this.#stopAt : Math.min(performance.now(), this.#stopAt);
      if (ticked < warmupEnd && now > warmupEnd) {
        // The schedule before the end of the warm-up is warm-up, however late the loop woke:
        // issued uncounted, or dropped uncounted when maxPending are unanswered.
        due += ((warmupEnd - ticked) * this.#s.ratePerSecond) / 1000;
        ticked = warmupEnd;
        for (; due >= 1; due--) if (this.#pending < this.#maxPending) this.#issue(false);
      }
      this.#beginIfDue(now);
      due += ((now - ticked) * this.#s.ratePerSecond) / 1000;
      ticked = now;
      for (; due >= 1; due--) {
        if (this.#pending >= this.#maxPending) {
          if (this.#measuring) this.#skipped++;
          continue;
        }
        this.#issue();
      }
      if (now === this.#stopAt) break;
      await (this.#pending >= this.#maxPending ? this.#nextAnswer() : sleep(1));
    }
    while (this.#pending > 0) await this.#nextAnswer();
  }

  /** The figures, once the run is over (the CPU is read first: the rest is not load). */
  result(): LoadResult {
    const { cpuUs } = this.#cpu.elapsed();
    const ids = this.#ids;
    const latencies = this.#latencies.toArray();
    const elapsedMs = Math.max(1, this.#lastAnswer - this.#measureFrom);
    return {
      offered: this.#offered, accepted: ids.length, refused: this.#refused, errors: this.#errors, skipped: this.#skipped,
      elapsedMs: round(elapsedMs),
      offeredPerSecond: round(this.#offered / this.#s.seconds),
      acceptedPerSecond: round((ids.length * 1000) / elapsedMs),
      p50Ms: round(percentile(latencies, 50), 2),
      p99Ms: round(percentile(latencies, 99), 2),
      maxMs: round(latencies.reduce((m, v) => Math.max(m, v), 0), 1),
      ids,
      clientCpuUs: cpuUs,
    };
  }

  /** A complete answer to the request issued at `issuedAt`. */
  answered(issuedAt: number, counted: boolean, status: number, body: Buffer): void {
    if (counted) {
      const now = performance.now();
      this.#lastAnswer = now;
      if (status === 200) {
        this.#latencies.add(now - issuedAt);
        this.#ids.push(body.toString('utf8'));
      } else {
        this.#refused[status] = (this.#refused[status] ?? 0) + 1;
      }
    }
    this.#settled();
  }

  /** No answer to the request issued at `issuedAt` (its connection failed or closed). */
  failed(_issuedAt: number, counted: boolean): void {
    if (counted) this.#errors++;
    this.#settled();
  }

  #issue(counted = this.#measuring): void {
    this.#pending++;
    if (counted) this.#offered++;
    this.pool.send(this.#requests.build(this.#n++), performance.now(), counted);
  }

  #settled(): void {
    this.#pending--;
    // Closed loop: sent again at once; the pool made the connection idle before reporting, and
    // it reports from socket events only, never from within `send`, so this never recurses.
    if (this.#loopDone) this.#sendAgain();
    else this.#wake();
  }

  /** Open loop: resolves at the next answer or failure (or at the end of the schedule). */
  #nextAnswer(): Promise<void> {
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }

  readonly #wake = (): void => {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.();
  };

  readonly #sendAgain = (): void => {
    const now = performance.now();
    if (now < this.#stopAt) {
      this.#beginIfDue(now);
      this.#issue();
    } else if (--this.#looping === 0) {
      this.#loopDone?.();
    }
  };

  #beginIfDue(now: number): void {
    if (!this.#measuring && now - this.#start >= this.#warmupMs) this.#begin();
  }

  #begin(): void {
    this.#measuring = true;
    this.#measureFrom = performance.now();
    this.#lastAnswer = this.#measureFrom;
    this.#cpu = CpuMeter.ofSelf();
    this.#s.onMeasureStart?.();
  }
}

/** Milliseconds, appended to a typed array that doubles when full: no boxed number per request. */
class LatencyLog {
  #values: Float64Array;
  #count = 0;

  constructor(capacity: number) {
    this.#values = new Float64Array(capacity);
  }

  add(ms: number): void {
    if (this.#count === this.#values.length) {
      const grown = new Float64Array(this.#values.length * 2);
      grown.set(this.#values);
      this.#values = grown;
    }
    this.#values[this.#count++] = ms;
  }

  toArray(): number[] {
    return Array.from(this.#values.subarray(0, this.#count));
  }
}

function origin(target: HttpTarget): string {
  return `http://${host(target)}`;
}

/** The Host header's value. */
function host(target: HttpTarget): string {
  return `127.0.0.1:${target.port}`;
}

/** GET a JSON document from the daemon (GET /sms/status/:id), over `dispatcher` or a connection of undici's global agent. */
export async function getJson<T>(target: HttpTarget, path: string, dispatcher?: Dispatcher): Promise<{ status: number; body: T }> {
  const res = await request(`${origin(target)}${path}`, { dispatcher, headers: { authorization: `Bearer ${target.token}` } });
  return { status: res.statusCode, body: (await res.body.json()) as T };
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
  // A stream body: undici writes each chunk as it is read, and pauses the file while the socket is full.
  async function* multipart(): AsyncGenerator<Buffer> {
    yield head;
    yield* createReadStream(file) as AsyncIterable<Buffer>;
    yield tail;
  }
  const res = await request(`${origin(target)}/sms/sendbulk`, {
    method: 'POST', body: Readable.from(multipart(), { objectMode: false }),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(length), authorization: `Bearer ${target.token}` },
  });
  const text = await res.body.text();
  const ms = performance.now() - t0;
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.statusCode, body, ms };
}
