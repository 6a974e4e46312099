/**
 * The queue ingress: send requests consumed from a durable RabbitMQ queue. A message is acked
 * only after its send is committed to the store, so an acked message survives `kill -9`; one
 * whose commit did not happen (a crash, a dropped connection) is delivered again: delivery is at
 * least once, and a connection lost between a commit and its ack sends that message twice.
 *
 * - Invalid (the HTTP API's 4xx): published to the dead-letter exchange with the five-field
 *   error in its headers (`x-smppd-error`, JSON; `x-smppd-error-code`), body and properties
 *   kept, then acked: never delivered again.
 * - Passing failure (QUEUE_FULL, a store error): held for a delay (exponential backoff, full
 *   jitter; at least QUEUE_FULL's retry-after), then nacked back to the queue.
 * - With a `replyTo`, the outcome is also published there: `{ messageId, reference }` or
 *   `{ reference, error: <five fields> }`, with the message's correlationId (best effort).
 *
 * The broker may come and go: the connection is kept up by a BrokerLink, and nothing else of
 * the daemon waits for it.
 */
import { fullJitterDelay, type BackoffPolicy } from '../../core/backoff.js';
import type { Clock, TimerHandle } from '../../core/clock.js';
import type { Log } from '../../core/log.js';
import { amqpEndpoint, type AmqpConfig } from '../../config/amqp-schema.js';
import type { SendRequest } from '../../dispatch/accept.js';
import type { HttpClient } from '../http/auth.js';
import type { ErrorBody } from '../http/errors.js';
import { ChannelAcks } from './channel-acks.js';
import { BrokerLink, describe, type Channel, type ChannelModel, type ConfirmChannel, type Connect, type ConsumeMessage, type Options } from './broker-link.js';
import { classifyFailure, readSendMessage } from './send-message.js';

/** What the ingress needs of the Acceptor: one send, resolved after its commit. */
export interface SendAcceptor {
  send(req: SendRequest): Promise<{ messageId: string }>;
}

/** Counters of the ingress (prom-client in the daemon; a no-op by default). */
export interface AmqpIngressMetrics {
  /** A message settled: accepted (committed, acked), dead (refused to the dead-letter exchange), requeued (a passing failure). */
  amqpMessage(result: 'accepted' | 'dead' | 'requeued'): void;
  /** The consumer's connection came up (true) or went away (false). */
  amqpConnected(up: boolean): void;
}

export const noAmqpIngressMetrics: AmqpIngressMetrics = { amqpMessage: () => {}, amqpConnected: () => {} };

export interface AmqpIngressOptions {
  config: AmqpConfig;
  acceptor: SendAcceptor;
  /** The configured clients (`clients[]`): who a message may be sent as, and their `senders`. */
  clients: readonly HttpClient[];
  clock: Clock;
  log: Log;
  metrics?: AmqpIngressMetrics;
  /** In [0, 1): the jitter's source. Default Math.random. */
  random?: () => number;
  /** Opens a broker connection (tests put a proxy or a double here). Default amqplib's. */
  connect?: Connect;
}

/** The names `declareSendQueue` declares. */
export type SendQueueNames = Pick<AmqpConfig, 'queue' | 'exchange' | 'routingKey' | 'deadLetterExchange' | 'deadLetterQueue'>;

/**
 * The consumed queue as the ingress declares it: durable, dead-lettering to a durable fanout
 * exchange with its own durable queue, and bound to `exchange` when there is one. The scale-out
 * benchmark's floor consumer declares the same, so that the broker does the same work for it.
 */
export async function declareSendQueue(channel: Channel, c: SendQueueNames): Promise<void> {
  await channel.assertExchange(c.deadLetterExchange, 'fanout', { durable: true });
  await channel.assertQueue(c.deadLetterQueue, { durable: true });
  await channel.bindQueue(c.deadLetterQueue, c.deadLetterExchange, '');
  await channel.assertQueue(c.queue, { durable: true, deadLetterExchange: c.deadLetterExchange });
  if (c.exchange !== undefined) {
    await channel.assertExchange(c.exchange, 'direct', { durable: true });
    await channel.bindQueue(c.queue, c.exchange, c.routingKey ?? c.queue);
  }
}

/** The headers a refused message carries on the dead-letter exchange. */
export const ERROR_HEADER = 'x-smppd-error';
export const ERROR_CODE_HEADER = 'x-smppd-error-code';

/** The longest a stop waits for each of: the consumer's cancel, the sends in progress, the connection's close. */
const STOP_WAIT_MS = 5_000;
/** A message's hold before it goes back to the queue is never shorter: no hot loop on a failing store. */
const MIN_REQUEUE_MS = 100;

/** One connection's channels; a message is settled only on the channel that delivered it. */
interface Session {
  connection: ChannelModel;
  channel: ConfirmChannel;
  open: boolean;
  consumerTag: string | undefined;
  /** Replies go on their own channel: a reply the broker refuses must not close the consumer's. */
  replies: Promise<Channel> | undefined;
  /** Set up and consuming (reported connected). */
  consuming: boolean;
  /** Messages held before their requeue. */
  held: Set<Held>;
  /** Acks go out together at the end of each turn (`channel-acks.ts`). */
  acks: ChannelAcks<ConsumeMessage>;
}

interface Held {
  message: ConsumeMessage;
  timer: TimerHandle;
  release: () => void;
}

export class AmqpIngress {
  readonly #config: AmqpConfig;
  readonly #acceptor: SendAcceptor;
  readonly #clock: Clock;
  readonly #log: Log;
  readonly #metrics: AmqpIngressMetrics;
  readonly #random: () => number;
  readonly #link: BrokerLink;
  readonly #requestUri: string;
  readonly #retry: BackoffPolicy;
  #clients: ReadonlyMap<string, HttpClient>;
  #session: Session | undefined;
  readonly #handling = new Set<Promise<void>>();
  /** Since when (monotonic ms) sends fail for a passing reason; null while they succeed. The requeue delay grows with it. */
  #failingSince: number | null = null;
  #stopping = false;

  constructor(o: AmqpIngressOptions) {
    this.#config = o.config;
    this.#acceptor = o.acceptor;
    this.#clock = o.clock;
    this.#log = o.log;
    this.#metrics = o.metrics ?? noAmqpIngressMetrics;
    this.#random = o.random ?? Math.random;
    this.#clients = byName(o.clients);
    this.#requestUri = `amqp://${o.config.queue}`;
    this.#retry = { initialMs: o.config.retry.initialSeconds * 1000, maxMs: o.config.retry.maxSeconds * 1000, multiplier: 2 };
    const { reconnect } = o.config;
    this.#link = new BrokerLink({
      url: o.config.url, endpoint: amqpEndpoint(o.config.url), name: 'smppd ingress', clock: o.clock, log: o.log,
      reconnect: { initialMs: reconnect.initialSeconds * 1000, maxMs: reconnect.maxSeconds * 1000, multiplier: 2 },
      ...(o.random ? { random: o.random } : {}),
      ...(o.connect ? { connect: o.connect } : {}),
      onUp: (connection) => this.#setUp(connection),
      onDown: () => this.#down(),
    });
  }

  /** Whether the consumer is connected and consuming. */
  get connected(): boolean {
    return this.#link.up;
  }

  /** Messages received and not yet settled (sending, or held before a requeue). */
  get inFlight(): number {
    return this.#handling.size;
  }

  /** Starts connecting and consuming; returns at once (an absent broker is retried with backoff). */
  start(): void {
    this.#link.start();
  }

  /** SIGHUP: the new clients apply to the next message. */
  replaceClients(clients: readonly HttpClient[]): void {
    this.#clients = byName(clients);
  }

  /**
   * Stops consuming, lets the sends in progress commit and be acked, returns held messages to
   * the queue, and closes the connection (what is still unacked goes back to the queue).
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    const session = this.#session;
    // Bounded: a broker that stopped answering (not yet noticed by the heartbeat) must not hold up a stop.
    if (session?.open && session.consumerTag !== undefined) await this.#bounded(session.channel.cancel(session.consumerTag).catch(() => {}));
    if (session) this.#releaseHeld(session);
    await this.#bounded((async () => { while (this.#handling.size > 0) await Promise.all([...this.#handling]); })());
    // Before the close: an ack still waiting for the end of the turn would be lost with the channel.
    this.#session?.acks.flush();
    await this.#bounded(this.#link.stop());
  }

  /** `work`, or STOP_WAIT_MS, whichever ends first. */
  #bounded(work: Promise<unknown>): Promise<void> {
    let timer: TimerHandle | undefined;
    const timeout = new Promise<void>((resolve) => { timer = this.#clock.setTimer(STOP_WAIT_MS, resolve); });
    return Promise.race([work.then(() => {}), timeout]).finally(() => timer?.cancel());
  }

  async #setUp(connection: ChannelModel): Promise<void> {
    const c = this.#config;
    const channel = await connection.createConfirmChannel();
    const acks = new ChannelAcks<ConsumeMessage>((message, multiple) => this.#sendAck(session, message, multiple), (m) => m.fields.deliveryTag);
    const session: Session = { connection, channel, open: true, consumerTag: undefined, replies: undefined, consuming: false, held: new Set(), acks };
    let lastError: string | undefined;
    channel.on('error', (e: unknown) => { lastError = describe(e); });
    channel.on('close', () => {
      session.open = false;
      if (this.#session === session) this.#link.fail(`the channel closed: ${lastError ?? 'no reason given'}`);
    });
    this.#session = session;
    // Declared every time: a broker that lost them (a new node) gets them back. Arguments that
    // differ from an existing queue's fail here (PRECONDITION_FAILED), logged by the link.
    await declareSendQueue(channel, c);
    await channel.prefetch(c.prefetch);
    const { consumerTag } = await channel.consume(c.queue, (message) => this.#receive(session, message), { noAck: false });
    session.consumerTag = consumerTag;
    session.consuming = true;
    this.#metrics.amqpConnected(true);
  }

  #down(): void {
    const session = this.#session;
    this.#session = undefined;
    if (!session) return;
    session.open = false;
    // Unacked messages went back to the queue with the channel: the held ones only end here.
    this.#releaseHeld(session);
    if (session.consuming) this.#metrics.amqpConnected(false);
  }

  #receive(session: Session, message: ConsumeMessage | null): void {
    if (message === null) {
      // The broker cancelled the consumer (the queue was deleted): a new connection declares it again.
      this.#link.fail('the broker cancelled the consumer (was the queue deleted?)');
      return;
    }
    session.acks.delivered(message);
    if (this.#stopping) {
      this.#settle(session, message, 'requeue');
      return;
    }
    const handling = this.#handle(session, message).catch((e: unknown) => {
      // A bug, not a refusal: the message goes back (with the channel, or after a delay).
      this.#log.error({ event: 'amqp_internal_error', err: e }, 'handling a queue message failed');
      return this.#holdThenRequeue(session, message, 0, 'INTERNAL');
    }).finally(() => this.#handling.delete(handling));
    this.#handling.add(handling);
  }

  async #handle(session: Session, message: ConsumeMessage): Promise<void> {
    const read = readSendMessage(message.content, {
      clients: this.#clients, maxBytes: this.#config.maxMessageBytes, requestUri: this.#requestUri, now: this.#clock.wallNow(),
      ...(this.#config.client !== undefined ? { defaultClient: this.#config.client } : {}),
    });
    if (!read.ok) return this.#deadLetter(session, message, read.refusal, read.reference);
    let messageId: string;
    try {
      ({ messageId } = await this.#acceptor.send(read.request));
    } catch (e) {
      const failure = classifyFailure(e, this.#requestUri);
      if (failure.kind === 'refuse') return this.#deadLetter(session, message, failure.refusal, read.reference);
      if (failure.code === 'INTERNAL') this.#log.error({ event: 'amqp_send_failed', err: e }, 'storing a queue message failed; it goes back to the queue');
      return this.#holdThenRequeue(session, message, failure.retryAfterMs, failure.code);
    }
    this.#noteAccepting();
    this.#reply(session, message, { messageId, reference: read.reference });
    this.#settle(session, message, 'ack');
    this.#metrics.amqpMessage('accepted');
  }

  /** A copy with the error in its headers to the dead-letter exchange; the original acked once the broker confirmed the copy. */
  async #deadLetter(session: Session, message: ConsumeMessage, refusal: ErrorBody, reference: string | null): Promise<void> {
    const p = message.properties;
    const options: Options.Publish = {
      persistent: true,
      headers: { ...(p.headers ?? {}), [ERROR_HEADER]: JSON.stringify(refusal), [ERROR_CODE_HEADER]: refusal.errorCode },
      // Not expiration (the copy must not expire) nor userId (the broker checks it against this connection's user).
      ...(p.contentType !== undefined ? { contentType: p.contentType } : {}),
      ...(p.contentEncoding !== undefined ? { contentEncoding: p.contentEncoding } : {}),
      ...(p.correlationId !== undefined ? { correlationId: p.correlationId } : {}),
      ...(p.replyTo !== undefined ? { replyTo: p.replyTo } : {}),
      ...(p.messageId !== undefined ? { messageId: p.messageId } : {}),
      ...(p.timestamp !== undefined ? { timestamp: p.timestamp } : {}),
      ...(p.type !== undefined ? { type: p.type } : {}),
      ...(p.appId !== undefined ? { appId: p.appId } : {}),
      ...(p.priority !== undefined ? { priority: p.priority } : {}),
    };
    const confirmed = await publishConfirmed(session, this.#config.deadLetterExchange, message.fields.routingKey, message.content, options);
    if (confirmed !== null) {
      this.#log.warn({ event: 'amqp_dead_letter_failed', reason: confirmed }, 'a refused queue message could not be dead-lettered; it goes back to the queue');
      return this.#holdThenRequeue(session, message, 0, 'INTERNAL');
    }
    this.#log.debug({ event: 'amqp_message_refused', errorCode: refusal.errorCode, reference }, 'a queue message was refused and dead-lettered');
    this.#reply(session, message, { reference, error: refusal });
    this.#settle(session, message, 'ack');
    this.#metrics.amqpMessage('dead');
  }

  /** Holds the message (it stays unacked), then nacks it back to the queue. Resolves when it is settled. */
  #holdThenRequeue(session: Session, message: ConsumeMessage, retryAfterMs: number, code: 'QUEUE_FULL' | 'INTERNAL'): Promise<void> {
    const now = this.#clock.now();
    if (this.#failingSince === null) {
      this.#failingSince = now;
      this.#log.warn({ event: 'amqp_deferring', errorCode: code },
        code === 'QUEUE_FULL' ? 'the send queue is full; queue messages go back to the queue and are tried again later'
          : 'queue messages cannot be stored now; they go back to the queue and are tried again later');
    }
    const delay = Math.max(MIN_REQUEUE_MS, retryAfterMs, this.#requeueDelay(now - this.#failingSince));
    if (!session.open || this.#stopping) {
      this.#settle(session, message, 'requeue');
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const held: Held = {
        message,
        timer: this.#clock.setTimer(delay, () => held.release()),
        release: () => {
          held.timer.cancel();
          if (!session.held.delete(held)) return;
          this.#settle(session, message, 'requeue');
          this.#metrics.amqpMessage('requeued');
          resolve();
        },
      };
      session.held.add(held);
    });
  }

  /**
   * Full jitter under a ceiling that grows with how long sends have been failing: the attempt
   * counted as one per `initialMs` of failure, so a prefetch of 500 messages failing together
   * do not push it to its maximum at once.
   */
  #requeueDelay(failingForMs: number): number {
    const attempt = Math.floor(Math.log2(1 + failingForMs / this.#retry.initialMs));
    return fullJitterDelay(this.#retry, attempt, this.#random());
  }

  #releaseHeld(session: Session): void {
    for (const held of [...session.held]) held.release();
  }

  #noteAccepting(): void {
    if (this.#failingSince === null) return;
    this.#failingSince = null;
    this.#log.info({ event: 'amqp_accepting' }, 'queue messages are stored again');
  }

  /** Acks or requeues on the channel that delivered the message; after that channel closed, the broker has requeued it already. */
  #settle(session: Session, message: ConsumeMessage, how: 'ack' | 'requeue'): void {
    if (!session.open) return;
    if (how === 'ack') {
      session.acks.ack(message);
      return;
    }
    session.acks.settled(message);
    try {
      session.channel.nack(message, false, true);
    } catch {
      // The channel closed in between: the broker requeues the message.
    }
  }

  #sendAck(session: Session, message: ConsumeMessage, multiple: boolean): void {
    if (!session.open) return;
    try {
      session.channel.ack(message, multiple);
    } catch {
      // The channel closed in between: the broker requeues what it had not been told of.
    }
  }

  /** Best effort, unconfirmed: a caller waiting for a reply must cope with none (a reconnect, a crash). */
  #reply(session: Session, message: ConsumeMessage, body: object): void {
    const to = message.properties.replyTo as string | undefined;
    if (to === undefined || to === '' || !session.open) return;
    const correlationId = (message.properties.correlationId ?? message.properties.messageId) as string | undefined;
    void this.#replyChannel(session).then((channel) => {
      channel?.publish('', to, Buffer.from(JSON.stringify(body)), {
        contentType: 'application/json', ...(correlationId !== undefined ? { correlationId } : {}),
      });
    }).catch((e: unknown) => this.#log.debug({ event: 'amqp_reply_failed', reason: describe(e) }, 'a reply could not be published'));
  }

  async #replyChannel(session: Session): Promise<Channel | undefined> {
    const replies = session.replies ??= session.connection.createChannel().then((channel) => {
      channel.on('error', () => {});
      channel.on('close', () => { if (session.replies === replies) session.replies = undefined; });
      return channel;
    });
    replies.catch(() => { if (session.replies === replies) session.replies = undefined; });
    const channel = await replies;
    return session.open ? channel : undefined;
  }
}

/** Publishes with a publisher confirm; null when the broker confirmed it, else why not. */
function publishConfirmed(session: Session, exchange: string, routingKey: string, content: Buffer, options: Options.Publish): Promise<string | null> {
  if (!session.open) return Promise.resolve('the channel is closed');
  return new Promise((resolve) => {
    let settled = false;
    const settle = (result: string | null): void => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    try {
      session.channel.publish(exchange, routingKey, content, options, (err: unknown) => settle(err ? describe(err) : null));
    } catch (e) {
      settle(describe(e));
    }
  });
}

function byName(clients: readonly HttpClient[]): ReadonlyMap<string, HttpClient> {
  return new Map(clients.map((c) => [c.name, c]));
}
