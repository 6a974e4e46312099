/**
 * What the AMQP tests share: the broker URL (SMPPD_TEST_AMQP_URL; the tests are skipped without
 * it), a TCP proxy between smppd and the broker that the tests cut and refuse (a broker that
 * drops the connection or is away), a second connection that looks at the queues as the broker
 * holds them, and names of their own for each test.
 */
import { randomBytes } from 'node:crypto';
import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';
import amqplib, { type Channel, type ChannelModel, type GetMessage } from 'amqplib';

/** amqp://user:password@host:port/vhost of a RabbitMQ the tests may create and delete queues on. */
export const AMQP_URL = process.env.SMPPD_TEST_AMQP_URL ?? '';

/** The note printed once per skipped file. */
export function noteSkipped(what: string): void {
  if (AMQP_URL !== '') return;
  // eslint-disable-next-line no-console -- a test file's one line about why it did not run
  console.log(`${what}: skipped; set SMPPD_TEST_AMQP_URL=amqp://guest:guest@127.0.0.1:5672 (a RabbitMQ the tests may use) to run them`);
}

/** `smppd-test-<label>-<random>`: no two tests (or runs) share a queue or exchange. */
export function uniqueName(label: string): string {
  return `smppd-test-${label}-${randomBytes(4).toString('hex')}`;
}

export async function until(check: () => boolean | Promise<boolean>, ms = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * A TCP proxy to the broker: `cut()` drops every connection through it (a network failure as
 * the client sees it) and refuses new ones until `restore()`.
 */
export class BrokerProxy {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #refusing = false;
  /** Connections accepted and passed on, in total. */
  connections = 0;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(target: string = AMQP_URL): Promise<BrokerProxy> {
    const url = new URL(target);
    const host = url.hostname;
    const port = Number(url.port || 5672);
    const server = createServer();
    const proxy = new BrokerProxy(server);
    server.on('connection', (client) => proxy.#accept(client, host, port));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  /** SMPPD_TEST_AMQP_URL with the proxy's address in place of the broker's. */
  get url(): string {
    const url = new URL(AMQP_URL);
    const address = this.#server.address();
    url.hostname = '127.0.0.1';
    url.port = String(typeof address === 'object' && address ? address.port : 0);
    return url.toString();
  }

  /** Drops every open connection and refuses new ones. */
  cut(): void {
    this.#refusing = true;
    for (const s of this.#sockets) s.destroy();
    this.#sockets.clear();
  }

  restore(): void {
    this.#refusing = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(client: Socket, host: string, port: number): void {
    if (this.#refusing) {
      client.destroy();
      return;
    }
    this.connections++;
    const upstream = tcpConnect(port, host);
    for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
      a.pipe(b);
      a.on('error', () => b.destroy());
      a.on('close', () => { b.destroy(); this.#sockets.delete(a); });
      this.#sockets.add(a);
    }
  }
}

/** A connection of the test's own, straight to the broker: publishes, looks at queues, cleans up. */
export class BrokerView {
  readonly #queues = new Set<string>();
  readonly #exchanges = new Set<string>();

  private constructor(readonly connection: ChannelModel, readonly channel: Channel) {}

  static async open(): Promise<BrokerView> {
    const connection = await amqplib.connect(AMQP_URL);
    const channel = await connection.createChannel();
    return new BrokerView(connection, channel);
  }

  /** Deleted by `close`. */
  ownQueue(name: string): string {
    this.#queues.add(name);
    return name;
  }

  ownExchange(name: string): string {
    this.#exchanges.add(name);
    return name;
  }

  /** Ready messages in `queue` (not those delivered and unacked). */
  async ready(queue: string): Promise<number> {
    return (await this.channel.checkQueue(queue)).messageCount;
  }

  /** Every ready message of `queue`, taken off it. */
  async drain(queue: string): Promise<GetMessage[]> {
    const out: GetMessage[] = [];
    for (;;) {
      const m = await this.channel.get(queue, { noAck: true });
      if (m === false) return out;
      out.push(m);
    }
  }

  publishJson(queue: string, body: unknown, options: amqplib.Options.Publish = {}): void {
    const content = typeof body === 'string' ? Buffer.from(body) : Buffer.from(JSON.stringify(body));
    this.channel.sendToQueue(queue, content, { persistent: true, contentType: 'application/json', ...options });
  }

  async close(): Promise<void> {
    // A channel each: a refused delete closes its channel.
    const each = async (remove: (ch: Channel) => Promise<unknown>): Promise<void> => {
      const ch = await this.connection.createChannel();
      ch.on('error', () => {});
      await remove(ch).catch(() => {});
      await ch.close().catch(() => {});
    };
    for (const q of this.#queues) await each((ch) => ch.deleteQueue(q));
    for (const e of this.#exchanges) await each((ch) => ch.deleteExchange(e));
    await this.connection.close().catch(() => {});
  }
}
