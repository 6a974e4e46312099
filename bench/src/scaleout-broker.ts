/**
 * The scale-out benchmark's own connection to RabbitMQ, apart from the publisher's: it looks at
 * the queue the daemons consume and at its dead-letter queue, and deletes both (and the
 * dead-letter exchange, and the wait queues of the daemons' clients) after the case. The names
 * are the daemon's defaults: `<queue>.dead`, `<queue>.wait.<client>`.
 */
import amqplib, { type Channel, type ChannelModel } from 'amqplib';
import { waitQueueName } from '../../src/config/index.js';

export class BrokerWatch {
  #channel: Promise<Channel> | undefined;

  private constructor(private readonly connection: ChannelModel) {}

  static async open(url: string): Promise<BrokerWatch> {
    const connection = await amqplib.connect(url, { clientProperties: { connection_name: 'smppd bench watch' } });
    connection.on('error', () => {}); // the next call fails and says so
    return new BrokerWatch(connection);
  }

  /** Ready messages in `queue` (not those delivered and unacknowledged). Throws when it does not exist. */
  async depth(queue: string): Promise<number> {
    return (await this.#check(queue)).messageCount;
  }

  /** Messages in the dead-letter queue of `queue`. */
  async deadLettered(queue: string): Promise<number> {
    return (await this.#check(`${queue}.dead`)).messageCount;
  }

  /** Deletes the queue, its dead-letter queue and exchange, the wait queues of `clients`, and closes the connection; never throws. */
  async removeAndClose(queue: string, clients: readonly string[] = []): Promise<string[]> {
    const problems: string[] = [];
    const each = async (what: string, remove: (ch: Channel) => Promise<unknown>): Promise<void> => {
      try {
        // A channel each: a refused delete closes its channel.
        const ch = await this.connection.createChannel();
        ch.on('error', () => {});
        await remove(ch);
        await ch.close().catch(() => {});
      } catch (e) {
        problems.push(`could not delete ${what}: ${e instanceof Error ? e.message : String(e)}`);
      }
    };
    await each(`queue ${queue}`, (ch) => ch.deleteQueue(queue));
    await each(`queue ${queue}.dead`, (ch) => ch.deleteQueue(`${queue}.dead`));
    await each(`exchange ${queue}.dead`, (ch) => ch.deleteExchange(`${queue}.dead`));
    for (const client of clients) await each(`queue ${waitQueueName(queue, client)}`, (ch) => ch.deleteQueue(waitQueueName(queue, client)));
    await this.connection.close().catch(() => {});
    return problems;
  }

  /** checkQueue on a channel kept open; a check of a missing queue closes it, so the next call opens another. */
  async #check(queue: string): Promise<{ messageCount: number; consumerCount: number }> {
    const opening = this.#channel ?? this.#open();
    this.#channel = opening;
    opening.catch(() => { if (this.#channel === opening) this.#channel = undefined; });
    return (await opening).checkQueue(queue);
  }

  async #open(): Promise<Channel> {
    const ch = await this.connection.createChannel();
    ch.on('error', () => {});
    ch.on('close', () => { this.#channel = undefined; });
    return ch;
  }
}
