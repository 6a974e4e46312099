/**
 * One broker connection of the queue ingress and its channels: `main` consumes the send queue,
 * `waits` the clients' wait queues, each with its own prefetch and acks, and replies go on a
 * channel of their own. A message is settled (acked, nacked) only on the channel that delivered
 * it and only while the session is open: once a channel closed, the broker has put back what
 * was not acked, and nothing more may be acked on this connection.
 */
import type { TimerHandle } from '../../core/clock.js';
import { describe, type Channel, type ChannelModel, type ConfirmChannel, type ConsumeMessage, type Options } from '../../amqp/broker-link.js';
import { ChannelAcks } from './channel-acks.js';
import { publishConfirmed } from './republish.js';

/** One channel and what it delivered. */
export interface Lane {
  channel: ConfirmChannel;
  /** Acks go out together at the end of each turn (`channel-acks.ts`). */
  acks: ChannelAcks<ConsumeMessage>;
  consumerTags: string[];
}

/** A message as delivered: by which session and channel. */
export interface Delivery {
  session: IngressSession;
  lane: Lane;
  message: ConsumeMessage;
}

/** A message held before its requeue (a passing failure). */
export interface Held {
  delivery: Delivery;
  timer: TimerHandle;
  release: () => void;
}

export class IngressSession {
  open = true;
  /** Set up and consuming (reported connected). */
  consuming = false;
  readonly held = new Set<Held>();
  /** Replies go on their own channel: a reply the broker refuses must not close a consumer's. */
  #replies: Promise<Channel> | undefined;

  private constructor(readonly connection: ChannelModel, readonly main: Lane, readonly waits: Lane) {}

  /**
   * Opens the two channels. `onBroken` runs (the session closed first) when one of them closes,
   * or when a mandatory publish comes back: only what is set aside in a wait queue is published
   * mandatory, so its wait queue is gone (deleted while we ran), its original must not be acked,
   * and a new connection declares the wait queue again.
   */
  static async open(connection: ChannelModel, onBroken: (session: IngressSession, reason: string) => void): Promise<IngressSession> {
    // The channels' handlers need the session, which needs the channels: they find it here once it is made.
    const made: { session?: IngressSession } = {};
    const broken = (reason: string): void => {
      const { session } = made;
      if (!session) return;
      session.open = false;
      onBroken(session, reason);
    };
    const lane = async (): Promise<Lane> => {
      const channel = await connection.createConfirmChannel();
      const opened: Lane = {
        channel, consumerTags: [],
        acks: new ChannelAcks<ConsumeMessage>((m, multiple) => made.session?.sendAck(opened, m, multiple), (m) => m.fields.deliveryTag),
      };
      let lastError: string | undefined;
      channel.on('error', (e: unknown) => { lastError = describe(e); });
      channel.on('close', () => broken(`the channel closed: ${lastError ?? 'no reason given'}`));
      channel.on('return', () => broken('a wait queue is gone (deleted?); connecting again declares it'));
      return opened;
    };
    const main = await lane();
    const waits = await lane();
    made.session = new IngressSession(connection, main, waits);
    return made.session;
  }

  /** Publishes on the delivery's channel, confirmed: null when the broker confirmed it, else why not. */
  publish(d: Delivery, exchange: string, routingKey: string, options: Options.Publish): Promise<string | null> {
    return publishConfirmed(d.lane.channel, this.open, exchange, routingKey, d.message.content, options);
  }

  /** Acks or requeues on the channel that delivered the message; after that channel closed, the broker has requeued it already. */
  settle(d: Delivery, how: 'ack' | 'requeue'): void {
    if (!this.open) return;
    if (how === 'ack') {
      d.lane.acks.ack(d.message);
      return;
    }
    d.lane.acks.settled(d.message);
    try {
      d.lane.channel.nack(d.message, false, true);
    } catch {
      // The channel closed in between: the broker requeues the message.
    }
  }

  /** Stops every consumer (what they delivered stays to be settled). */
  async cancelConsumers(): Promise<void> {
    if (!this.open) return;
    await Promise.all([this.main, this.waits].flatMap((lane) => lane.consumerTags.map((tag) => lane.channel.cancel(tag).catch(() => {}))));
  }

  /** Sends the acks waiting for the end of the turn: before a close, which would lose them. */
  flushAcks(): void {
    this.main.acks.flush();
    this.waits.acks.flush();
  }

  /** Best effort, unconfirmed: a caller waiting for a reply must cope with none (a reconnect, a crash). Rejects with why it was not sent. */
  async reply(message: ConsumeMessage, body: object): Promise<void> {
    const to = message.properties.replyTo as string | undefined;
    if (to === undefined || to === '' || !this.open) return;
    const correlationId = (message.properties.correlationId ?? message.properties.messageId) as string | undefined;
    const channel = await this.#replyChannel();
    channel?.publish('', to, Buffer.from(JSON.stringify(body)), {
      contentType: 'application/json', ...(correlationId !== undefined ? { correlationId } : {}),
    });
  }

  async #replyChannel(): Promise<Channel | undefined> {
    const replies = this.#replies ??= this.connection.createChannel().then((channel) => {
      channel.on('error', () => {});
      channel.on('close', () => { if (this.#replies === replies) this.#replies = undefined; });
      return channel;
    });
    replies.catch(() => { if (this.#replies === replies) this.#replies = undefined; });
    const channel = await replies;
    return this.open ? channel : undefined;
  }

  /** What a lane's ChannelAcks sends. */
  private sendAck(lane: Lane, message: ConsumeMessage, multiple: boolean): void {
    if (!this.open) return;
    try {
      lane.channel.ack(message, multiple);
    } catch {
      // The channel closed in between: the broker requeues what it had not been told of.
    }
  }
}

/**
 * With amqp.users, what smppd sets aside carries its own user as user_id. A URL whose user is
 * not the one the broker authenticated would have every such publish refused (and the channel
 * closed): found out here, once, as a failed start-up the link logs and retries.
 */
export async function checkUserId(connection: ChannelModel, userId: string): Promise<void> {
  const probe = await connection.createConfirmChannel();
  let refusal: string | undefined;
  probe.on('error', (e: unknown) => { refusal = describe(e); });
  // To no queue: the default exchange drops it, after checking user_id.
  const failed = await publishConfirmed(probe, true, '', '', Buffer.alloc(0), { userId });
  await probe.close().catch(() => {});
  if (failed !== null) throw new Error(`the broker refuses user_id ${JSON.stringify(userId)} (the user of amqp.url) on this connection: ${refusal ?? failed}`);
}
