/**
 * Status and inbound events to a topic exchange, as an `EventSink` (events/event-dispatcher.ts):
 * each event is one persistent publish with a publisher confirm, routing key `status.<STATUS>`
 * or `inbound`. A confirm is the acknowledgement (`{ ok: true, status: 200 }`); a nack, a
 * return (no queue bound for the key, with `mandatory`), a timeout or an absent broker is a
 * failure, so the dispatcher's retries, per-message order and dead parking apply unchanged.
 *
 * Properties: `contentType: application/json`, `messageId` and header `x-smppd-event-id` (the
 * outbox id: deduplicate by it, or by messageId + status), header `x-smppd-client`, `timestamp`
 * (unix seconds), `appId: smppd`.
 */
import type { BackoffPolicy } from '../core/backoff.js';
import type { Clock } from '../core/clock.js';
import type { Log } from '../core/log.js';
import { amqpEndpoint, type AmqpConfig } from '../config/amqp-schema.js';
import { BrokerLink, describe, type ChannelModel, type ConfirmChannel, type Connect, type Message } from '../amqp/broker-link.js';
import type { EventSink } from './event-dispatcher.js';
import type { PostOutcome } from './webhook-client.js';

export interface AmqpEventPublisherOptions {
  /** amqp:// or amqps://. A secret. */
  url: string;
  /** What may be logged of the URL (`amqpEndpoint`). */
  endpoint: string;
  /** A durable topic exchange, declared on every connect. */
  exchange: string;
  /** Milliseconds a publish waits for its confirm before it is a timeout. > 0. */
  timeoutMs: number;
  /** true: an event no queue is bound for is a failure (retried, then parked as dead). */
  mandatory: boolean;
  reconnect: BackoffPolicy;
  clock: Clock;
  log: Log;
  /** In [0, 1): the jitter's source. Default Math.random. */
  random?: () => number;
  connect?: Connect;
}

/** AMQP 0-9-1 reply code of a mandatory message that no queue took. */
const NO_ROUTE = 312;

interface Session {
  channel: ConfirmChannel;
  open: boolean;
  /** messageIds the broker returned (unroutable); its confirm follows the return. */
  returned: Set<string>;
  /** Set while `publish` said the channel's buffer is full; resumed on 'drain' or when the channel closes. */
  full: { drained: Promise<void>; resume: () => void } | undefined;
}

export class AmqpEventPublisher {
  readonly #o: AmqpEventPublisherOptions;
  readonly #link: BrokerLink;
  #session: Session | undefined;
  #sinks = 0;
  #stopped = false;

  constructor(o: AmqpEventPublisherOptions) {
    this.#o = o;
    this.#link = new BrokerLink({
      url: o.url, endpoint: o.endpoint, name: 'smppd events', clock: o.clock, log: o.log, reconnect: o.reconnect,
      ...(o.random ? { random: o.random } : {}),
      ...(o.connect ? { connect: o.connect } : {}),
      onUp: (connection) => this.#setUp(connection),
      onDown: () => this.#down(),
    });
  }

  /** scheme://host:port vhost V exchange X: what may be logged. */
  get origin(): string {
    return `${this.#o.endpoint} exchange ${this.#o.exchange}`;
  }

  get connected(): boolean {
    return this.#link.up;
  }

  /** Starts connecting; returns at once (an absent broker is retried with backoff). */
  start(): void {
    this.#link.start();
  }

  /** Closes the connection: a publish still waiting for its confirm ends as a failure. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#link.stop();
  }

  /** One client's events. The publisher stops when every sink it handed out is closed (or on `stop`). */
  sink(client: string): EventSink {
    this.#sinks++;
    let closed = false;
    return {
      origin: this.origin,
      post: (body, eventId) => (closed ? Promise.resolve(failed('CLOSED: the event publisher was closed', 0)) : this.publish(client, body, eventId)),
      close: async () => {
        if (closed) return;
        closed = true;
        if (--this.#sinks === 0) await this.stop();
      },
    };
  }

  /** Publishes one event of `client`; never rejects. */
  async publish(client: string, body: string, eventId: number): Promise<PostOutcome> {
    const { clock } = this.#o;
    const started = clock.now();
    const elapsed = (): number => clock.now() - started;
    const routingKey = routingKeyOf(body);
    if (routingKey === null) return failed('BAD_EVENT: the event has no type/status to route it by', elapsed());
    let session = this.#session;
    while (session?.full) {
      await session.full.drained;
      session = this.#session;
    }
    if (!session?.open || this.#stopped) return failed('NOT_CONNECTED: the broker is not reachable', elapsed());
    const messageId = String(eventId);
    const { mandatory, timeoutMs, exchange } = this.#o;
    return new Promise<PostOutcome>((resolve) => {
      let settled = false;
      const settle = (outcome: PostOutcome): void => {
        if (settled) return;
        settled = true;
        timer.cancel();
        resolve(outcome);
      };
      const confirmed = (err: unknown): void => {
        const returned = session.returned.delete(messageId);
        // amqplib: 'message nacked' for a basic.nack, 'channel closed' when the channel ended first.
        if (err) settle(failed(/nacked/.test(describe(err)) ? 'NACK: the broker refused the event' : `CLOSED: ${describe(err)}`, elapsed()));
        else if (returned) settle(failed(`NO_ROUTE: no queue is bound to ${exchange} for ${routingKey} (${NO_ROUTE})`, elapsed()));
        else settle({ ok: true, status: 200, ms: elapsed() });
      };
      const timer = clock.setTimer(timeoutMs, () => {
        session.returned.delete(messageId);
        settle({ ok: false, failure: 'timeout', error: `TIMEOUT: no confirm from the broker within ${timeoutMs} ms`, ms: elapsed() });
      });
      try {
        const room = session.channel.publish(exchange, routingKey, Buffer.from(body), {
          persistent: true, mandatory, contentType: 'application/json', messageId, appId: 'smppd',
          timestamp: Math.floor(clock.wallNow() / 1000), headers: { 'x-smppd-event-id': eventId, 'x-smppd-client': client },
        }, confirmed);
        if (!room && !session.full) {
          // The socket's buffer is full: later events wait for 'drain' rather than pile up in memory.
          let resume = (): void => {};
          const drained = new Promise<void>((r) => { resume = r; });
          session.full = { drained, resume: () => { session.full = undefined; resume(); } };
          session.channel.once('drain', () => session.full?.resume());
        }
      } catch (e) {
        settle(failed(`CLOSED: ${describe(e)}`, elapsed()));
      }
    });
  }

  async #setUp(connection: ChannelModel): Promise<void> {
    const channel = await connection.createConfirmChannel();
    const session: Session = { channel, open: true, returned: new Set(), full: undefined };
    let lastError: string | undefined;
    channel.on('error', (e: unknown) => { lastError = describe(e); });
    channel.on('return', (message: Message) => {
      const id = message.properties.messageId as unknown;
      if (typeof id === 'string') session.returned.add(id);
    });
    channel.on('close', () => {
      session.open = false;
      session.full?.resume(); // waiting publishers then see the closed session
      if (this.#session === session) this.#link.fail(`the channel closed: ${lastError ?? 'no reason given'}`);
    });
    await channel.assertExchange(this.#o.exchange, 'topic', { durable: true });
    this.#session = session;
  }

  #down(): void {
    if (this.#session) this.#session.open = false;
    this.#session = undefined;
  }
}

/** The publisher `amqp.events` asks for (not started); undefined without it. */
export function eventPublisherFor(amqp: AmqpConfig | undefined, deps: { clock: Clock; log: Log }): AmqpEventPublisher | undefined {
  const events = amqp?.events;
  if (!amqp || !events) return undefined;
  return new AmqpEventPublisher({
    url: amqp.url, endpoint: amqpEndpoint(amqp.url), exchange: events.exchange, timeoutMs: events.timeoutSeconds * 1000, mandatory: events.mandatory,
    reconnect: { initialMs: amqp.reconnect.initialSeconds * 1000, maxMs: amqp.reconnect.maxSeconds * 1000, multiplier: 2 }, ...deps,
  });
}

/**
 * `status.<STATUS>` for a status event, `inbound` for an inbound one (the webhook body's
 * `type`); null for anything else.
 */
export function routingKeyOf(body: string): string | null {
  let event: unknown;
  try {
    event = JSON.parse(body);
  } catch {
    return null;
  }
  const { type, status } = (event ?? {}) as { type?: unknown; status?: unknown };
  if (type === 'inbound') return 'inbound';
  if (type === 'status' && typeof status === 'string' && /^[A-Z_]{1,32}$/.test(status)) return `status.${status}`;
  return null;
}

function failed(error: string, ms: number): PostOutcome {
  return { ok: false, failure: 'network', error, ms };
}
