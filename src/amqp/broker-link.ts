/**
 * One connection to the broker, kept up: connect, let the owner set up its channels, and when
 * the connection or the setup fails, connect again after an exponential backoff with full
 * jitter (timers from the injected Clock). Logs a change of state once (`amqp_connected`,
 * `amqp_unavailable`), not every failed attempt. The only file that imports amqplib's runtime;
 * the others use its types.
 */
import amqplib, { type ChannelModel } from 'amqplib';
import { fullJitterDelay, type BackoffPolicy } from '../core/backoff.js';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { Log } from '../core/log.js';

export type { Channel, ChannelModel, ConfirmChannel, ConsumeMessage, Message, MessageProperties, Options } from 'amqplib';

/** Opens a connection (amqplib's `connect`, or a test double). */
export type Connect = (url: string, options: { timeout: number; clientProperties: Record<string, string> }) => Promise<ChannelModel>;

export interface BrokerLinkOptions {
  /** amqp:// or amqps://. A secret: never logged. */
  url: string;
  /** What may be logged of the URL (`amqpEndpoint`). */
  endpoint: string;
  /** Names the connection in logs and in the broker's connection list, e.g. `smppd ingress`. */
  name: string;
  clock: Clock;
  log: Log;
  /** Delay between attempts: full jitter under min(maxMs, initialMs · multiplier^attempt). */
  reconnect: BackoffPolicy;
  /** In [0, 1): the jitter's source. Default Math.random. */
  random?: () => number;
  /**
   * Sets up channels, topology and consumers on a fresh connection. A rejection closes the
   * connection and counts as a failed attempt (a queue declared with other arguments, say).
   */
  onUp: (connection: ChannelModel) => Promise<void>;
  /** The connection is gone, and every channel on it. Not called by `stop`. */
  onDown?: () => void;
  /** Default amqplib's. */
  connect?: Connect;
  /** Milliseconds a TCP/TLS connect and AMQP handshake may take. Default 10,000. */
  connectTimeoutMs?: number;
}

type State = 'idle' | 'connecting' | 'up' | 'waiting' | 'stopped';

export class BrokerLink {
  readonly #o: BrokerLinkOptions;
  readonly #connect: Connect;
  readonly #random: () => number;
  #state: State = 'idle';
  #attempt = 0;
  #connection: ChannelModel | undefined;
  #timer: TimerHandle | undefined;
  #connecting: Promise<void> | undefined;
  /** What was last logged: up, or down; a change of state is logged once. */
  #reported: 'up' | 'down' | undefined;
  /** Why the current connection is being closed by us (a broken channel), for the log. */
  #failReason: string | undefined;

  constructor(o: BrokerLinkOptions) {
    this.#o = o;
    this.#connect = o.connect ?? ((url, options) => amqplib.connect(url, options));
    this.#random = o.random ?? Math.random;
  }

  /** Whether a connection is open and set up. */
  get up(): boolean {
    return this.#state === 'up';
  }

  /** Starts connecting; never throws for an absent broker (it keeps trying). */
  start(): void {
    if (this.#state !== 'idle') return;
    this.#connecting = this.#open();
  }

  /**
   * Closes the connection because something on it broke (a channel the server closed, a
   * consumer it cancelled); a new one follows after the backoff.
   */
  fail(reason: string): void {
    const connection = this.#connection;
    if (!connection || this.#state === 'stopped') return;
    this.#failReason ??= reason;
    connection.close().catch(() => this.#lost(connection, reason));
  }

  /** Stops reconnecting and closes the connection (gracefully: the broker requeues what was not acked). */
  async stop(): Promise<void> {
    if (this.#state === 'stopped') return;
    this.#state = 'stopped';
    this.#timer?.cancel();
    await this.#connecting;
    const connection = this.#connection;
    this.#connection = undefined;
    if (connection) await connection.close().catch(() => {});
  }

  async #open(): Promise<void> {
    this.#state = 'connecting';
    const { url, name, connectTimeoutMs = 10_000 } = this.#o;
    let connection: ChannelModel;
    try {
      connection = await this.#connect(url, { timeout: connectTimeoutMs, clientProperties: { connection_name: name } });
    } catch (e) {
      this.#retry(describe(e));
      return;
    }
    if (this.#isStopped()) {
      await connection.close().catch(() => {});
      return;
    }
    let lastError: string | undefined;
    // amqplib emits 'error' (a socket error, a heartbeat timeout, a fatal server close) before
    // 'close'; 'close' carries the cause when the other side ended the connection (a broker
    // shutdown's 320 CONNECTION_FORCED is not an 'error'), nothing when we closed it. It closes
    // the channels before it emits either: the owner's `fail` for them is a consequence, and
    // its reason ("the channel closed") applies only when the connection ended because we closed it.
    connection.on('error', (e: unknown) => { lastError = describe(e); });
    connection.on('close', (cause?: unknown) => this.#lost(connection,
      lastError ?? (cause ? describe(cause) : undefined) ?? this.#failReason ?? 'closed by the broker'));
    connection.on('blocked', (reason: unknown) => this.#o.log.warn({ event: 'amqp_blocked', connection: name, reason: String(reason) },
      'the broker blocks publishing on this connection (a resource alarm); publishes wait'));
    connection.on('unblocked', () => this.#o.log.info({ event: 'amqp_unblocked', connection: name }, 'the broker unblocked the connection'));
    this.#connection = connection;
    this.#failReason = undefined;
    try {
      await this.#o.onUp(connection);
    } catch (e) {
      this.#failReason ??= `setting up failed: ${describe(e)}`;
      await connection.close().catch(() => {});
      this.#lost(connection, this.#failReason);
      return;
    }
    if (this.#connection !== connection || this.#isStopped()) return; // lost while setting up
    this.#state = 'up';
    this.#attempt = 0;
    if (this.#reported !== 'up') {
      this.#reported = 'up';
      this.#o.log.info({ event: 'amqp_connected', connection: name, endpoint: this.#o.endpoint }, 'connected to the broker');
    }
  }

  /** Read through a method: `stop` may change the state while `#open` awaits. */
  #isStopped(): boolean {
    return this.#state === 'stopped';
  }

  #lost(connection: ChannelModel, reason: string): void {
    if (this.#connection !== connection) return;
    this.#connection = undefined;
    this.#failReason = undefined;
    if (this.#state === 'stopped') return;
    this.#o.onDown?.();
    this.#retry(reason);
  }

  #retry(reason: string): void {
    if (this.#state === 'stopped') return;
    this.#state = 'waiting';
    const delay = fullJitterDelay(this.#o.reconnect, this.#attempt++, this.#random());
    const { name, endpoint } = this.#o;
    if (this.#reported !== 'down') {
      this.#reported = 'down';
      this.#o.log.warn({ event: 'amqp_unavailable', connection: name, endpoint, reason },
        'the broker is not reachable; connecting again with backoff (the HTTP API is not affected)');
    } else {
      this.#o.log.debug({ event: 'amqp_retry', connection: name, endpoint, reason, delayMs: delay }, 'connecting to the broker failed again');
    }
    this.#timer = this.#o.clock.setTimer(delay, () => {
      this.#timer = undefined;
      if (this.#state === 'waiting') this.#connecting = this.#open();
    });
  }
}

const MAX_REASON_CHARS = 200;

/** A short, single-line reason: the code and message. amqplib's messages carry no credentials. */
export function describe(e: unknown): string {
  const err = e as { code?: unknown; message?: unknown } | null;
  const code = typeof err?.code === 'string' || typeof err?.code === 'number' ? `${String(err.code)}: ` : '';
  const message = typeof err?.message === 'string' ? err.message : String(e);
  const text = `${code}${message}`.replace(/\s+/g, ' ').trim();
  return text.length > MAX_REASON_CHARS ? `${text.slice(0, MAX_REASON_CHARS - 1)}…` : text;
}
