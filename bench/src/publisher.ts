/**
 * The scale-out benchmark's load: send requests published to a RabbitMQ queue at an offered
 * rate (open loop), persistent, with publisher confirms. Confirms are asynchronous, one callback
 * per message over several confirm channels, so a publish never waits for the one before it:
 * the broker's confirm latency does not bound the rate, nor (by default) does the number of
 * messages awaiting their confirm. A broker that cannot keep up pushes back on the TCP
 * connection (credit flow); amqplib then buffers what is published in this process, and the
 * confirm latency and `confirmedPerSecond` show it.
 */
import amqplib, { type ChannelModel, type ConfirmChannel } from 'amqplib';
import { CpuMeter, sleep } from './proc.js';
import { percentile, round } from './stats.js';

export interface PublishSettings {
  /** amqp:// URL of the broker. */
  url: string;
  /** Published to through the default exchange. */
  queue: string;
  /** Messages per second offered. > 0. */
  ratePerSecond: number;
  seconds: number;
  /** Confirm channels on the one connection, used in turn. Default 4. */
  channels?: number;
  /** Published and not yet confirmed above which a due message is skipped (counted). Default none. */
  maxUnconfirmed?: number;
  /** How long to wait after the schedule for the last confirms, ms. Default 60,000. */
  confirmTimeoutMs?: number;
  /** The body of the n-th message published (0, 1, …). */
  body: (n: number) => Buffer;
  /** Called just before the first publish. */
  onStart?: () => void;
}

export interface PublishResult {
  /** Messages the schedule made due. */
  offered: number;
  /** Handed to a channel (numbered 0 … published − 1). */
  published: number;
  /** Acknowledged by the broker (stored, being persistent on a durable queue). */
  confirmed: number;
  /** Refused by the broker (nack), or lost with a channel. */
  nacked: number;
  /** Due but not published: `maxUnconfirmed` were waiting for their confirm. */
  skipped: number;
  /** Still unconfirmed when the wait for confirms ended. */
  unconfirmed: number;
  /** Times a publish found the connection's write buffer full (the broker or the socket behind). */
  writeBufferFull: number;
  /** Times the broker blocked the connection (a resource alarm). */
  blocked: number;
  /** Wall-clock ms (epoch) message n was published, for n < published. */
  publishedAt: Float64Array;
  /** Wall-clock ms of the first and last publish. */
  firstPublishAt: number;
  lastPublishAt: number;
  publishedPerSecond: number;
  /** Confirmed over first publish → last confirm: what the broker took in. */
  confirmedPerSecond: number;
  /** Publish to the broker's confirm, ms. */
  confirmP50Ms: number;
  confirmP99Ms: number;
  confirmMaxMs: number;
  /** The bench process's CPU from the first publish to the last confirm, µs. */
  cpuUs: number;
}

/** A result as the benchmark reports it: the figures, without the per-message times and the CPU; with the channels used. */
export type PublishSummary = Omit<PublishResult, 'publishedAt' | 'firstPublishAt' | 'lastPublishAt' | 'cpuUs'> & { channels: number };

export function publishSummary(r: PublishResult, channels: number): PublishSummary {
  const { publishedAt: _at, firstPublishAt: _f, lastPublishAt: _l, cpuUs: _cpu, ...figures } = r;
  return { ...figures, channels };
}

const PUBLISH_OPTIONS = { persistent: true, contentType: 'application/json' } as const;
/**
 * How often the schedule is looked at, ms. A wake-up costs about as much CPU as a publish on a
 * 2-core VM, and the bench shares the cores with what it measures; 40 messages at once at
 * 8,000/s is a burst the broker takes in well under a tick.
 */
const TICK_MS = 5;

/** Opens a connection of its own, publishes on the schedule, waits for the confirms, closes it. */
export async function publishOpenLoop(s: PublishSettings): Promise<PublishResult> {
  const connection = await amqplib.connect(s.url, { clientProperties: { connection_name: 'smppd bench publisher' } });
  let blocked = 0;
  connection.on('error', () => {}); // reported through the confirms of the messages it lost
  connection.on('blocked', () => { blocked++; });
  try {
    const channels: ConfirmChannel[] = [];
    for (let i = 0; i < (s.channels ?? 4); i++) {
      const ch = await connection.createConfirmChannel();
      ch.on('error', () => {});
      channels.push(ch);
    }
    const run = new PublishRun(channels, s);
    await run.run();
    return { ...run.result(), blocked };
  } finally {
    await closeQuietly(connection);
  }
}

class PublishRun {
  readonly #channels: ConfirmChannel[];
  readonly #s: PublishSettings;
  readonly #max: number;
  readonly #publishedAt: Float64Array;
  readonly #confirmMs: number[] = [];
  #offered = 0;
  #published = 0;
  #confirmed = 0;
  #nacked = 0;
  #skipped = 0;
  #pending = 0;
  #writeBufferFull = 0;
  #endedAt = 0;
  #lastConfirmAt = NaN;
  #cpu = CpuMeter.ofSelf();
  #settledAll: (() => void) | undefined;

  constructor(channels: ConfirmChannel[], s: PublishSettings) {
    this.#channels = channels;
    this.#s = s;
    this.#max = s.maxUnconfirmed ?? Infinity;
    // The schedule makes at most rate × seconds due (+1 for rounding).
    this.#publishedAt = new Float64Array(Math.ceil(s.ratePerSecond * s.seconds) + 16);
  }

  /** Every TICK_MS, publishes what the schedule says is due by now; then waits for the confirms. */
  async run(): Promise<void> {
    this.#s.onStart?.();
    this.#cpu = CpuMeter.ofSelf();
    const start = performance.now();
    const durationMs = this.#s.seconds * 1000;
    for (;;) {
      // Due by now, counted from the start (no fractions carried over: rate × seconds in all, exactly).
      const elapsed = Math.min(performance.now() - start, durationMs);
      const due = Math.floor((elapsed * this.#s.ratePerSecond) / 1000);
      while (this.#offered < due) {
        this.#offered++;
        if (this.#pending >= this.#max || this.#published >= this.#publishedAt.length) this.#skipped++;
        else this.#publish();
      }
      if (elapsed === durationMs) break;
      await sleep(TICK_MS);
    }
    this.#endedAt = performance.now();
    if (this.#pending > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.#settledAll = resolve;
        timer = setTimeout(resolve, this.#s.confirmTimeoutMs ?? 60_000);
      });
      clearTimeout(timer);
    }
  }

  result(): Omit<PublishResult, 'blocked'> {
    const { cpuUs } = this.#cpu.elapsed();
    const n = this.#published;
    const at = this.#publishedAt.subarray(0, n);
    return {
      offered: this.#offered, published: n, confirmed: this.#confirmed, nacked: this.#nacked, skipped: this.#skipped,
      unconfirmed: this.#pending, writeBufferFull: this.#writeBufferFull,
      publishedAt: at,
      firstPublishAt: n > 0 ? at[0]! : NaN,
      lastPublishAt: n > 0 ? at[n - 1]! : NaN,
      publishedPerSecond: n > 1 ? round(((n - 1) * 1000) / Math.max(1, at[n - 1]! - at[0]!)) : 0,
      confirmedPerSecond: n > 0 && this.#confirmed > 0 ? round((this.#confirmed * 1000) / Math.max(1, this.#lastConfirmAt - at[0]!)) : 0,
      confirmP50Ms: round(percentile(this.#confirmMs, 50), 1),
      confirmP99Ms: round(percentile(this.#confirmMs, 99), 1),
      confirmMaxMs: round(this.#confirmMs.reduce((m, v) => Math.max(m, v), 0), 1),
      cpuUs,
    };
  }

  #publish(): void {
    const n = this.#published++;
    const channel = this.#channels[n % this.#channels.length]!;
    const t = performance.now();
    this.#publishedAt[n] = performance.timeOrigin + t;
    this.#pending++;
    const written = channel.sendToQueue(this.#s.queue, this.#s.body(n), PUBLISH_OPTIONS, (err: unknown) => {
      this.#pending--;
      if (err) this.#nacked++;
      else {
        this.#confirmed++;
        const now = performance.now();
        this.#confirmMs.push(now - t);
        this.#lastConfirmAt = performance.timeOrigin + now;
      }
      if (this.#pending === 0 && this.#endedAt > 0) this.#settledAll?.();
    });
    if (!written) this.#writeBufferFull++;
  }
}

async function closeQuietly(connection: ChannelModel): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([connection.close().catch(() => {}), new Promise((r) => { timer = setTimeout(r, 5_000); })]);
  clearTimeout(timer);
}
