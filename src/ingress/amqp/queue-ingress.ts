/**
 * The queue ingress: send requests consumed from a durable RabbitMQ queue. A message is acked
 * only after its send is committed to the store, so an acked message survives `kill -9`; one
 * whose commit did not happen (a crash, a dropped connection) is delivered again: delivery is at
 * least once. A message with an id (its AMQP `messageId` property, else its `reference`) is
 * committed with that id as its client's idempotency key (`amqp.dedupHours`), so one delivered
 * again after its commit (its ack lost with a connection or a crash, or a publisher's re-send) is
 * not stored again: it is acked, and its `replyTo` answered the first one's message id. The same
 * id with another body is refused (IDEMPOTENCY_KEY_REUSED).
 *
 * - Invalid (the HTTP API's 4xx): published to the dead-letter exchange with the five-field
 *   error in its headers (`x-smppd-error`, JSON; `x-smppd-error-code`), body and properties
 *   kept, then acked: never delivered again.
 * - Passing failure (QUEUE_FULL, a store error): held for a delay (exponential backoff, full
 *   jitter; at least QUEUE_FULL's retry-after), then nacked back to the queue. A client at its
 *   own `clients[].maxQueued` is no one else's failure: its message is set aside in the client's
 *   wait queue as below, and held and requeued there.
 * - With a `replyTo`, the outcome is also published there: `{ messageId, reference }` or
 *   `{ reference, error: <five fields> }`, with the message's correlationId (best effort).
 * - Past its client's rate limit (`clients[].rateLimit`, shared with the HTTP API): set aside in
 *   the client's wait queue `<queue>.wait.<client>` (published there with a confirm, then
 *   acked), whose consumer sends it when the client's token comes (rate-waits.ts). Holding it
 *   on the send queue's consumer instead would fill the prefetch every client shares, and nacking
 *   it would put it back at the head of the queue, in front of the other clients' messages: one
 *   client's flood would starve the others. Set aside, it costs the send queue one publish and
 *   one ack, and the others' messages go past it.
 *
 * Who a message may act as: queue-identity.ts.
 *
 * The broker may come and go: the connection is kept up by a BrokerLink, and nothing else of
 * the daemon waits for it.
 */
import type { Clock, TimerHandle } from '../../core/clock.js';
import type { Log } from '../../core/log.js';
import { amqpEndpoint, amqpUser, waitQueueName, type AmqpConfig } from '../../config/amqp-schema.js';
import type { SendOptions, SendRequest } from '../../dispatch/accept.js';
import type { IdempotencyKeys } from '../../store/idempotency.js';
import { BrokerLink, describe, type ChannelModel, type Connect, type ConsumeMessage } from '../../amqp/broker-link.js';
import type { ApiClient } from '../../api/auth.js';
import { ClientRateLimiter } from '../../api/client-rate-limiter.js';
import type { ErrorBody } from '../../api/errors.js';
import { QueueDedup } from './dedup.js';
import { IngressSession, checkUserId, type Delivery, type Lane } from './ingress-session.js';
import { queueAccess, type QueueAccess, type Vouched } from './queue-identity.js';
import { RateWaits } from './rate-waits.js';
import { copyOptions } from './republish.js';
import { RequeueHolds } from './requeue-holds.js';
import { classifyFailure, readSendMessage } from './send-message.js';
import { CLIENT_HEADER, ERROR_CODE_HEADER, ERROR_HEADER, RECEIVED_AT_HEADER, declareSendQueue, declareWaitQueue } from './send-queue.js';

export { CLIENT_HEADER, ERROR_CODE_HEADER, ERROR_HEADER, RECEIVED_AT_HEADER, declareSendQueue, type SendQueueNames } from './send-queue.js';

/** What the ingress needs of the Acceptor: one send, resolved after its commit. */
export interface SendAcceptor {
  send(req: SendRequest, options?: SendOptions): Promise<{ messageId: string }>;
}

/** Counters of the ingress (prom-client in the daemon; a no-op by default). */
export interface AmqpIngressMetrics {
  /**
   * A message settled: accepted (committed, acked), dead (refused to the dead-letter exchange),
   * requeued (a passing failure), waiting (past its client's rate limit or at its maxQueued: set
   * aside in the client's wait queue, to be settled again from there), duplicate (its id was
   * committed before: acked without storing it again).
   */
  amqpMessage(result: 'accepted' | 'dead' | 'requeued' | 'waiting' | 'duplicate'): void;
  /** The consumer's connection came up (true) or went away (false). */
  amqpConnected(up: boolean): void;
  /** A message of `client` past its rate limit (set aside). */
  rateLimited(client: string, ingress: 'amqp'): void;
}

export const noAmqpIngressMetrics: AmqpIngressMetrics = { amqpMessage: () => {}, amqpConnected: () => {}, rateLimited: () => {} };

export interface AmqpIngressOptions {
  config: AmqpConfig;
  acceptor: SendAcceptor;
  /** Where the messages' ids are kept against redeliveries (`amqp.dedupHours`; the store). Absent: none are. */
  keys?: Pick<IdempotencyKeys, 'findIdempotencyKey'>;
  /** The configured clients (`clients[]`): who a message may be sent as, and their `senders`. */
  clients: readonly ApiClient[];
  /** The clients' rate limits, shared with the HTTP API; default: one of its own, built from `clients`. */
  rateLimiter?: ClientRateLimiter;
  clock: Clock;
  log: Log;
  metrics?: AmqpIngressMetrics;
  /** In [0, 1): the jitter's source. Default Math.random. */
  random?: () => number;
  /** Opens a broker connection (tests put a proxy or a double here). Default amqplib's. */
  connect?: Connect;
}

/** The longest a stop waits for each of: the consumer's cancel, the sends in progress, the connection's close. */
const STOP_WAIT_MS = 5_000;
/**
 * Unacknowledged messages per wait queue consumer: what a client's line holds in memory, ahead of
 * its tokens. At most `amqp.prefetch`. 50 sustain thousands of sends a second per client.
 */
const WAIT_PREFETCH = 50;

/** A message read and valid: its request, and when smppd first read it (wall ms). */
interface ReadSend {
  request: SendRequest;
  reference: string | null;
  receivedAt: number;
}

/** A message read and valid, in its client's line for a token. */
interface Waiting extends Delivery, ReadSend {}

export class AmqpIngress {
  readonly #config: AmqpConfig;
  readonly #acceptor: SendAcceptor;
  readonly #clock: Clock;
  readonly #log: Log;
  readonly #metrics: AmqpIngressMetrics;
  readonly #link: BrokerLink;
  readonly #requestUri: string;
  /** Messages that failed for a passing reason, held before they go back to their queue. */
  readonly #requeues: RequeueHolds;
  readonly #access: QueueAccess;
  /** With amqp.users: smppd's own RabbitMQ user, the user_id of what it sets aside (what no publisher can write). */
  readonly #stamp: string | undefined;
  readonly #limiter: ClientRateLimiter;
  readonly #ownsLimiter: boolean;
  readonly #waits: RateWaits<Waiting>;
  /** Messages with an id, committed once (absent: amqp.dedupHours 0, or no store given). */
  readonly #dedup: QueueDedup | undefined;
  #clients: ReadonlyMap<string, ApiClient>;
  #session: IngressSession | undefined;
  readonly #handling = new Set<Promise<void>>();
  #stopping = false;

  constructor(o: AmqpIngressOptions) {
    this.#config = o.config;
    this.#acceptor = o.acceptor;
    this.#clock = o.clock;
    this.#log = o.log;
    this.#metrics = o.metrics ?? noAmqpIngressMetrics;
    this.#clients = byName(o.clients);
    this.#requestUri = `amqp://${o.config.queue}`;
    this.#requeues = new RequeueHolds({
      clock: o.clock, log: o.log, random: o.random ?? Math.random, stopping: () => this.#stopping,
      retry: { initialMs: o.config.retry.initialSeconds * 1000, maxMs: o.config.retry.maxSeconds * 1000, multiplier: 2 },
      onRequeued: () => this.#metrics.amqpMessage('requeued'),
    });
    this.#access = queueAccess(o.config);
    this.#dedup = o.keys !== undefined && o.config.dedupHours > 0 ? new QueueDedup(o.keys, o.clock, o.config.dedupHours) : undefined;
    this.#stamp = o.config.users !== undefined ? amqpUser(o.config.url) : undefined;
    this.#ownsLimiter = o.rateLimiter === undefined;
    this.#limiter = o.rateLimiter ?? new ClientRateLimiter(o.clients, o.clock);
    this.#waits = new RateWaits<Waiting>(this.#limiter, o.clock, (w) => this.#track(w, this.#send(w, w)));
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

  /** Messages received and not yet settled (sending, held before a requeue, or in a client's line for a token). */
  get inFlight(): number {
    return this.#handling.size + this.#waits.size;
  }

  /** Starts connecting and consuming; returns at once (an absent broker is retried with backoff). */
  start(): void {
    this.#link.start();
  }

  /** SIGHUP: the new clients apply to the next message, their rate limits to the messages waiting too. */
  replaceClients(clients: readonly ApiClient[]): void {
    this.#clients = byName(clients);
    // A shared limiter is replaced by its owner (the daemon), before this.
    if (this.#ownsLimiter) this.#limiter.replace(clients);
    this.#waits.limitsChanged();
  }

  /**
   * Stops consuming, lets the sends in progress commit and be acked, returns held messages to
   * their queues, and closes the connection (what is still unacked goes back to the queue).
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    const session = this.#session;
    // Bounded: a broker that stopped answering (not yet noticed by the heartbeat) must not hold up a stop.
    if (session) {
      await this.#bounded(session.cancelConsumers());
      this.#releaseHeld(session);
    }
    await this.#bounded((async () => { while (this.#handling.size > 0) await Promise.all([...this.#handling]); })());
    // Before the close: an ack still waiting for the end of the turn would be lost with the channel.
    this.#session?.flushAcks();
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
    const session = await IngressSession.open(connection, (broken, reason) => { if (this.#session === broken) this.#link.fail(reason); });
    this.#session = session;
    if (this.#stamp !== undefined) await checkUserId(connection, this.#stamp);
    // Declared every time: a broker that lost them (a new node) gets them back. Arguments that
    // differ from an existing queue's fail here (PRECONDITION_FAILED), logged by the link.
    const { main, waits } = session;
    await declareSendQueue(main.channel, c);
    const waitQueues = new Map<string, string>();
    for (const client of c.clients) waitQueues.set(client, await declareWaitQueue(main.channel, c, client));
    // Each wait queue's consumer holds at most WAIT_PREFETCH: per consumer, as RabbitMQ applies basic.qos without global.
    await waits.channel.prefetch(Math.min(c.prefetch, WAIT_PREFETCH));
    for (const [client, queue] of waitQueues) await this.#consume(session, waits, queue, client);
    // Last: the send queue's messages may need the wait queues' consumers.
    await main.channel.prefetch(c.prefetch);
    await this.#consume(session, main, c.queue);
    session.consuming = true;
    this.#metrics.amqpConnected(true);
  }

  /** `waitingFor`: the client whose wait queue `queue` is; absent for the send queue. */
  async #consume(session: IngressSession, lane: Lane, queue: string, waitingFor?: string): Promise<void> {
    const { consumerTag } = await lane.channel.consume(queue, (message) => this.#receive(session, lane, message, waitingFor), { noAck: false });
    lane.consumerTags.push(consumerTag);
  }

  #down(): void {
    const session = this.#session;
    this.#session = undefined;
    if (!session) return;
    session.open = false;
    // Unacked messages went back to their queues with the channels: the held ones only end here.
    this.#releaseHeld(session);
    if (session.consuming) this.#metrics.amqpConnected(false);
  }

  #receive(session: IngressSession, lane: Lane, message: ConsumeMessage | null, waitingFor: string | undefined): void {
    if (message === null) {
      // The broker cancelled the consumer (the queue was deleted): a new connection declares it again.
      this.#link.fail(`the broker cancelled the consumer (was ${waitingFor === undefined ? 'the queue' : `the wait queue of ${waitingFor}`} deleted?)`);
      return;
    }
    lane.acks.delivered(message);
    const d: Delivery = { session, lane, message };
    if (this.#stopping) {
      session.settle(d, 'requeue');
      return;
    }
    this.#track(d, this.#handle(d, waitingFor));
  }

  /** Keeps `work` in #handling until it is done; a failure of it is a bug: the message goes back. */
  #track(d: Delivery, work: Promise<void>): void {
    const handling = work.catch((e: unknown) => {
      // A bug, not a refusal: the message goes back (with the channel, or after a delay).
      this.#log.error({ event: 'amqp_internal_error', err: e }, 'handling a queue message failed');
      return this.#requeues.hold(d, 0, 'INTERNAL');
    }).finally(() => this.#handling.delete(handling));
    this.#handling.add(handling);
  }

  async #handle(d: Delivery, waitingFor: string | undefined): Promise<void> {
    const receivedAt = this.#receivedAt(d.message, waitingFor);
    const read = readSendMessage(d.message.content, {
      clients: this.#clients, access: this.#access, vouched: this.#vouched(d.message, waitingFor),
      maxBytes: this.#config.maxMessageBytes, requestUri: this.#requestUri, now: receivedAt,
    });
    if (!read.ok) return this.#deadLetter(d, read.refusal, read.reference);
    const send: ReadSend = { request: read.request, reference: read.reference, receivedAt };
    const { client } = read.request;
    // Back from its wait queue: into its client's line, which takes the tokens in order.
    if (client === waitingFor) return this.#waits.hold(client, { ...d, ...send });
    if (!this.#waits.admit(client)) {
      // Past its rate, or behind its messages waiting (for their tokens, or for room under its maxQueued).
      if (this.#limiter.limitOf(client) !== undefined) this.#metrics.rateLimited(client, 'amqp');
      return this.#setAside(d, client, receivedAt);
    }
    return this.#send(d, send);
  }

  /**
   * Wall ms when smppd first read the message: now, or for one back from a wait queue, when it was
   * set aside. A forged time can only make a schedule pass that is past, as sending now would.
   */
  #receivedAt(message: ConsumeMessage, waitingFor: string | undefined): number {
    const now = this.#clock.wallNow();
    const at: unknown = waitingFor === undefined ? undefined : message.properties.headers?.[RECEIVED_AT_HEADER];
    return typeof at === 'number' && Number.isFinite(at) && at <= now ? at : now;
  }

  /** What the broker vouches for: the user_id, or that smppd itself set the message aside for `waitingFor`. */
  #vouched(message: ConsumeMessage, waitingFor: string | undefined): Vouched {
    const userId: unknown = message.properties.userId;
    if (typeof userId !== 'string') return {};
    if (waitingFor !== undefined && userId === this.#stamp) return { setAsideFor: waitingFor };
    return { userId };
  }

  async #send(d: Delivery, read: ReadSend): Promise<void> {
    let messageId: string;
    let again = false;
    try {
      ({ messageId, again } = this.#dedup !== undefined
        ? await this.#dedup.send(d.message, read.request, read.reference, this.#acceptor)
        : { ...(await this.#acceptor.send(read.request)), again: false });
    } catch (e) {
      const failure = classifyFailure(e, this.#requestUri);
      if (failure.kind === 'refuse') return this.#deadLetter(d, failure.refusal, read.reference);
      if (failure.ownCap === true) {
        // Held on the send queue, a client's messages at its own cap would fill the prefetch every
        // client shares and come back to the head of the queue, in front of the others' (as past a
        // rate limit): they wait in its wait queue, and are held there.
        if (d.lane !== d.session.waits) return this.#setAside(d, read.request.client, read.receivedAt);
        return this.#requeues.holdOne(d, failure.retryAfterMs);
      }
      if (failure.alone === true) return this.#requeues.holdOne(d, failure.retryAfterMs);
      if (failure.code === 'INTERNAL') this.#log.error({ event: 'amqp_send_failed', err: e }, 'storing a queue message failed; it goes back to the queue');
      return this.#requeues.hold(d, failure.retryAfterMs, failure.code);
    }
    this.#requeues.accepting();
    this.#reply(d, { messageId, reference: read.reference });
    d.session.settle(d, 'ack');
    if (again) this.#log.debug({ event: 'amqp_duplicate', client: read.request.client, messageId, reference: read.reference }, 'a queue message committed before came again; acked, not stored again');
    this.#metrics.amqpMessage(again ? 'duplicate' : 'accepted');
  }

  /**
   * Past its client's rate limit, or at its maxQueued: a copy to the client's wait queue
   * (mandatory: one that comes back means the queue is gone), the original acked once the broker
   * confirmed the copy.
   */
  async #setAside(d: Delivery, client: string, receivedAt: number): Promise<void> {
    this.#waits.settingAside(client);
    const options = { ...copyOptions(d.message.properties, { [CLIENT_HEADER]: client, [RECEIVED_AT_HEADER]: receivedAt }, this.#stamp), mandatory: true };
    const failed = await d.session.publish(d, '', waitQueueName(this.#config.queue, client), options);
    if (failed !== null) {
      this.#waits.setAsideFailed(client);
      this.#log.warn({ event: 'amqp_set_aside_failed', client, reason: failed }, 'a queue message could not be set aside in its client\'s wait queue; it goes back to the queue');
      return this.#requeues.hold(d, 0, 'INTERNAL');
    }
    d.session.settle(d, 'ack');
    this.#metrics.amqpMessage('waiting');
  }

  /** A copy with the error in its headers to the dead-letter exchange; the original acked once the broker confirmed the copy. */
  async #deadLetter(d: Delivery, refusal: ErrorBody, reference: string | null): Promise<void> {
    const options = copyOptions(d.message.properties, { [ERROR_HEADER]: JSON.stringify(refusal), [ERROR_CODE_HEADER]: refusal.errorCode });
    const failed = await d.session.publish(d, this.#config.deadLetterExchange, d.message.fields.routingKey, options);
    if (failed !== null) {
      this.#log.warn({ event: 'amqp_dead_letter_failed', reason: failed }, 'a refused queue message could not be dead-lettered; it goes back to the queue');
      return this.#requeues.hold(d, 0, 'INTERNAL');
    }
    this.#log.debug({ event: 'amqp_message_refused', errorCode: refusal.errorCode, reference }, 'a queue message was refused and dead-lettered');
    this.#reply(d, { reference, error: refusal });
    d.session.settle(d, 'ack');
    this.#metrics.amqpMessage('dead');
  }

  /** Held messages and the clients' lines go back to their queues (nothing is settled on a session already closed). */
  #releaseHeld(session: IngressSession): void {
    for (const held of [...session.held]) held.release();
    for (const w of this.#waits.releaseAll()) w.session.settle(w, 'requeue');
  }

  #reply(d: Delivery, body: object): void {
    d.session.reply(d.message, body).catch((e: unknown) => this.#log.debug({ event: 'amqp_reply_failed', reason: describe(e) }, 'a reply could not be published'));
  }
}

function byName(clients: readonly ApiClient[]): ReadonlyMap<string, ApiClient> {
  return new Map(clients.map((c) => [c.name, c]));
}
