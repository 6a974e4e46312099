/**
 * The broker restarted mid-run — nothing lost, nothing stuck. A RabbitMQ node of the
 * test's own (test/support/private-rabbitmq.ts; the shared broker other tests use is never
 * touched) is restarted twice on its data directory, once stopped gracefully (SIGTERM, as
 * `rabbitmqctl stop` or a service manager does it: clients get connection.close 320) and once
 * killed (SIGKILL: sockets just close, the node recovers from disk), while an application
 * publishes 1,000 persistent send requests to the daemon's durable queue and `smppd start`, a
 * child process, consumes them and publishes their status events to a topic exchange.
 *
 * What smppd promises (docs/api.md "Queue ingress (RabbitMQ)", src/ingress/amqp/queue-ingress.ts):
 * a request is acked only after its commit, so delivery is at least once; a request with an id
 * (here each has its messageId) is committed with it, so one delivered again after its commit
 * (its ack lost with the connection) or published again by the application (its confirm lost)
 * is not stored again: every request is stored exactly once. The bounds below, for requests
 * without an id, still hold: a copy more only when its connection was lost between the commit
 * and the ack, per restart at most a prefetch's worth, and one per publish of the application.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import amqplib, { type ChannelModel, type ConfirmChannel } from 'amqplib';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../support/free-port.js';
import { JsonLinesProcess } from '../../support/json-lines-process.js';
import { PrivateRabbitMQ } from '../../support/private-rabbitmq.js';
import { sleep, until } from './broker.js';

const INSTALLED = PrivateRabbitMQ.find() !== null;
if (!INSTALLED) {
  // eslint-disable-next-line no-console -- a test file's one line about why it did not run
  console.log('broker restart (test/integration/amqp/broker-restart.test.ts): skipped; rabbitmq-server is not installed (or set SMPPD_TEST_RABBITMQ_SERVER to its script)');
}

const TOKEN = 'broker-restart-token-0123456789';
const QUEUE = 'smppd.sends';
const EVENTS_EXCHANGE = 'smppd.events';
/** The application's durable queue for the daemon's events. */
const EVENTS_QUEUE = 'app.status-events';
const REQUESTS = 1_000;
/** amqp.prefetch's default: the most a lost connection can leave committed and unacked. */
const PREFETCH = 500;
const HTTP_TEXT = 'sent over HTTP while the broker is away';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Request { reference: string; body: Buffer }
interface StoredMessage { id: string; text: string; status: string; created_at: number }

/**
 * The application's side: persistent publishes with publisher confirms, a batch per tick; what
 * was not confirmed (the connection lost first, or the broker away) is published again, on a new
 * connection once the broker accepts one, until every request is confirmed.
 */
class ConfirmingPublisher {
  /** Times each reference was handed to the broker. */
  readonly published = new Map<string, number>();
  readonly confirmed = new Set<string>();
  connections = 0;
  readonly #pending = new Set<string>();
  readonly #returned = new Set<string>();
  #connection: ChannelModel | undefined;
  #channel: ConfirmChannel | undefined;
  #stopped = false;

  constructor(private readonly url: string, private readonly requests: readonly Request[]) {}

  async run(perTick: number, tickMs: number, deadlineMs: number): Promise<void> {
    const deadline = Date.now() + deadlineMs;
    while (this.confirmed.size < this.requests.length) {
      if (this.#stopped) {
        await this.#connection?.close().catch(() => {}); // one opened while stopping
        throw new Error('publishing: stopped');
      }
      if (Date.now() > deadline) throw new Error(`publishing: ${this.confirmed.size} of ${this.requests.length} confirmed after ${deadlineMs} ms`);
      const channel = this.#channel ?? await this.#connect();
      if (channel) {
        const due = this.requests.filter((r) => !this.confirmed.has(r.reference) && !this.#pending.has(r.reference)).slice(0, perTick);
        for (const r of due) this.#publish(channel, r);
      }
      await sleep(channel ? tickMs : 200); // pacing, and the wait before connecting again
    }
    await this.stop();
  }

  /** Ends `run` (a test that failed half-way) and closes the connection. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#connection?.close().catch(() => {});
  }

  #publish(channel: ConfirmChannel, r: Request): void {
    try {
      channel.sendToQueue(QUEUE, r.body, { persistent: true, mandatory: true, contentType: 'application/json', messageId: r.reference }, (err: unknown) => {
        this.#pending.delete(r.reference);
        const returned = this.#returned.delete(r.reference);
        if (!err && !returned) this.confirmed.add(r.reference);
      });
    } catch {
      return; // the channel closed in between: not handed over
    }
    this.#pending.add(r.reference);
    this.published.set(r.reference, (this.published.get(r.reference) ?? 0) + 1);
  }

  async #connect(): Promise<ConfirmChannel | undefined> {
    let connection: ChannelModel;
    try {
      connection = await amqplib.connect(this.url, { timeout: 2_000 });
    } catch {
      return undefined;
    }
    connection.on('error', () => {});
    connection.on('close', () => {
      // Whatever awaited a confirm on it is published again.
      this.#pending.clear();
      this.#connection = undefined;
      this.#channel = undefined;
    });
    try {
      const channel = await connection.createConfirmChannel();
      channel.on('error', () => {});
      channel.on('return', (m: amqplib.Message) => this.#returned.add(String(m.properties.messageId)));
      this.connections++;
      this.#connection = connection;
      this.#channel = channel;
      return channel;
    } catch {
      await connection.close().catch(() => {});
      return undefined;
    }
  }
}

/** GET /healthz and POST /sms/sendSms, one after the other, until `done()`; every answer's status. */
async function probeHttp(port: number, done: () => boolean, answers: Array<{ what: string; status: number | string; body: string }>): Promise<void> {
  while (!done()) {
    const health = await fetch(`http://127.0.0.1:${port}/healthz`).then(async (r) => ({ status: r.status, body: await r.text() }), (e: unknown) => ({ status: String(e), body: '' }));
    answers.push({ what: 'healthz', ...health });
    const send = await fetch(`http://127.0.0.1:${port}/sms/sendSms`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ senderId: 'restart', destinationNumber: '447700900999', message: HTTP_TEXT, messageType: 'TEXT' }),
    }).then(async (r) => ({ status: r.status, body: await r.text() }), (e: unknown) => ({ status: String(e), body: '' }));
    answers.push({ what: 'sendSms', ...send });
    await sleep(250);
  }
}

/** One sample of the daemon's /metrics (`name` with its labels, e.g. `smppd_amqp_connected`); 0 when absent. */
async function metric(port: number, sample: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line === undefined ? 0 : Number(line.slice(sample.length + 1));
}

describe.skipIf(!INSTALLED)('the broker restarted mid-run', () => {
  it('1,000 queued requests across a graceful restart and a kill -9 of the broker: each stored and DELIVERED, duplicates only as promised, nothing dead-lettered or unacked, every event published, HTTP answering throughout', async () => {
    const node = await PrivateRabbitMQ.create('restart');
    cleanups.push(() => node.destroy());
    const firstBootMs = await node.start();

    // The application's events queue, bound before the daemon publishes (its publishes are mandatory).
    const setup = await amqplib.connect(node.url);
    const setupChannel = await setup.createChannel();
    await setupChannel.assertExchange(EVENTS_EXCHANGE, 'topic', { durable: true });
    await setupChannel.assertQueue(EVENTS_QUEUE, { durable: true });
    await setupChannel.bindQueue(EVENTS_QUEUE, EVENTS_EXCHANGE, 'status.#');
    await setup.close();

    const dir = mkdtempSync(join(tmpdir(), 'smppd-broker-restart-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const smscPort = await freePort();
    const configPath = join(dir, 'smppd.yaml');
    writeFileSync(configPath, [
      'log: { level: info }',
      'http: { listen: "127.0.0.1:0" }',
      `clients: [{ name: app, token: ${TOKEN} }]`,
      'store: { path: smppd.db }',
      'shutdown: { drainSeconds: 10 }',
      'amqp:',
      `  url: "${node.url}"`,
      `  queue: ${QUEUE}`,
      '  client: app',
      '  reconnect: { initialSeconds: 0.2, maxSeconds: 1 }',
      `  events: { exchange: ${EVENTS_EXCHANGE}, retry: { initialSeconds: 0.2, maxSeconds: 1 } }`,
      `simulator: { enabled: true, port: ${smscPort}, systemId: restart, password: rspw, deliveryReceiptDelayMs: 10 }`,
      `upstreams: [{ name: sim, host: 127.0.0.1, port: ${smscPort}, systemId: restart, password: rspw, binds: 2 }]`,
      '',
    ].join('\n'));
    const daemon = new JsonLinesProcess(process.execPath, ['--import', './test/support/ts-register.mjs', 'src/main.ts', 'start', '--config', configPath]);
    cleanups.push(() => daemon.kill());
    const port = Number((await daemon.next('http_listening', 1, 60_000))[0]!.port);
    const connected = (name: string, count: number) => daemon.next('amqp_connected', count, 60_000, (e) => e.connection === name);
    await connected('smppd ingress', 1); // the send queue is declared and consumed
    await connected('smppd events', 1);

    const db = new Database(join(dir, 'smppd.db'), { readonly: true });
    cleanups.push(() => { db.close(); });
    const stored = (): StoredMessage[] => db.prepare('SELECT id, text, status, created_at FROM messages ORDER BY seq').all() as StoredMessage[];

    const requests: Request[] = Array.from({ length: REQUESTS }, (_, i) => {
      const reference = `r${String(i).padStart(4, '0')}`;
      const body = { senderId: 'restart', destinationNumber: `4477009${String(i).padStart(5, '0')}`, message: `queued ${reference}`, messageType: 'TEXT', reference };
      return { reference, body: Buffer.from(JSON.stringify(body)) };
    });
    const queued = () => stored().filter((m) => m.text.startsWith('queued '));
    const publisher = new ConfirmingPublisher(node.url, requests);
    cleanups.push(() => publisher.stop());
    // About 200 a second, a few seconds of publishing: both restarts fall in the middle of the run.
    const publishing = publisher.run(20, 100, 240_000);
    publishing.catch(() => {}); // awaited below

    // --- the broker goes away twice mid-run, and comes back each time on the same data directory
    const answers: Array<{ what: string; status: number | string; body: string }> = [];
    const restarts: Array<{ how: 'graceful' | 'kill'; stopAt: number; upAt: number; stopMs: number; bootMs: number; confirmedAtStop: number }> = [];
    let failed = false; // ends a probe loop that a failed expectation left running
    cleanups.push(() => { failed = true; });
    for (const [how, storedBefore] of [['graceful', 250], ['kill', 600]] as const) {
      await until(() => queued().length >= storedBefore, 60_000, `${storedBefore} requests stored before the ${how} restart`);
      const confirmedAtStop = publisher.confirmed.size;
      const stopAt = Date.now();
      const stopMs = await node.stop(how);
      let brokerBack = false;
      const before = answers.length;
      const probing = probeHttp(port, () => brokerBack || failed, answers);
      const round = restarts.length + 1;
      for (const name of ['smppd ingress', 'smppd events']) {
        const down = (await daemon.next('amqp_unavailable', round, 30_000, (e) => e.connection === name)).at(-1)!;
        // The cause (320 CONNECTION_FORCED, or the socket's end), not its consequence: the
        // channels closed with the connection (test/regression/amqp-close-reason.test.ts).
        expect(down.reason).not.toMatch(/channel closed/);
      }
      await until(() => answers.length >= before + 6, 30_000, 'HTTP answers while the broker is away');
      expect(await metric(port, 'smppd_amqp_connected')).toBe(0);
      const bootMs = await node.start();
      const upAt = Date.now();
      brokerBack = true;
      await probing;
      // The daemon reconnected both of its connections.
      await connected('smppd ingress', round + 1);
      await connected('smppd events', round + 1);
      expect(await metric(port, 'smppd_amqp_connected')).toBe(1);
      restarts.push({ how, stopAt, upAt, stopMs, bootMs, confirmedAtStop });
    }
    // HTTP kept answering: every probe while the broker was away got its 200.
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    await publishing;
    expect(publisher.confirmed.size).toBe(REQUESTS);
    // Both restarts were mid-run: requests were still to be published at each.
    expect(restarts.map((r) => r.confirmedAtStop < REQUESTS)).toEqual([true, true]);

    // --- nothing lost: every request stored, every message DELIVERED
    const missing = () => {
      const seen = new Set(queued().map((m) => m.text.slice('queued '.length)));
      return requests.filter((r) => !seen.has(r.reference)).map((r) => r.reference);
    };
    await until(() => missing().length === 0, 60_000, 'every request stored').catch((e: unknown) => {
      throw new Error(`${String(e)}: missing ${missing().length}: ${missing().slice(0, 20).join(' ')}`);
    });
    const notDelivered = () => stored().filter((m) => m.status !== 'DELIVERED');
    await until(() => notDelivered().length === 0, 60_000, 'every message DELIVERED').catch((e: unknown) => {
      throw new Error(`${String(e)}: ${JSON.stringify(notDelivered().slice(0, 10))}`);
    });
    const httpSent = answers.filter((a) => a.what === 'sendSms').map((a) => a.body).sort();
    expect(stored().filter((m) => m.text === HTTP_TEXT).map((m) => m.id).sort()).toEqual(httpSent);

    // --- duplicates only as promised
    const copies = new Map<string, StoredMessage[]>();
    for (const m of queued()) {
      const reference = m.text.slice('queued '.length);
      copies.set(reference, [...(copies.get(reference) ?? []), m]);
    }
    // The publisher's own: a reference published k times may be stored k times. The daemon's: a copy
    // more per restart that came after the first copy was stored (its ack lost with the connection),
    // at most a prefetch's worth per restart.
    let byPublisher = 0;
    const byRestart = restarts.map(() => ({ count: 0, offsets: [] as number[] }));
    const unexplained: Array<{ reference: string; copies: number; published: number; restartsAfterFirst: number }> = [];
    for (const [reference, list] of copies) {
      const published = publisher.published.get(reference) ?? 0;
      const extra = list.length - 1;
      const republished = Math.min(extra, published - 1);
      const redelivered = extra - republished;
      const first = Math.min(...list.map((m) => m.created_at));
      const restartsAfterFirst = restarts.filter((r) => r.upAt > first).length;
      if (redelivered > restartsAfterFirst) unexplained.push({ reference, copies: list.length, published, restartsAfterFirst });
      byPublisher += republished;
      if (redelivered > 0 && restartsAfterFirst > 0) {
        const broke = restarts.findIndex((r) => r.upAt > first);
        byRestart[broke]!.count += redelivered;
        byRestart[broke]!.offsets.push(first - restarts[broke]!.stopAt);
      }
    }
    expect(unexplained).toEqual([]);
    for (const r of byRestart) expect(r.count).toBeLessThanOrEqual(PREFETCH);
    // With their messageId kept (amqp.dedupHours), none of them at all.
    expect([...copies.values()].filter((list) => list.length > 1).map((list) => list[0]!.text)).toEqual([]);

    // --- nothing stuck: the queue drained, nothing unacked, the consumer back, nothing dead-lettered
    await until(async () => {
      const c = await node.queueCounts(QUEUE);
      return c.ready === 0 && c.unacked === 0 && c.consumers === 1;
    }, 60_000, `${QUEUE} drained with its consumer back`).catch(async (e: unknown) => {
      throw new Error(`${String(e)}: ${JSON.stringify(await node.queueCounts(QUEUE))}`);
    });
    expect(await node.queueCounts(`${QUEUE}.dead`)).toMatchObject({ ready: 0, unacked: 0 });
    // The daemon's own count agrees: one accepted per stored copy, none refused or requeued.
    expect(await metric(port, 'smppd_amqp_messages_total{result="accepted"}')).toBe(queued().length);
    expect(await metric(port, 'smppd_amqp_messages_total{result="dead"}')).toBe(0);
    expect(await metric(port, 'smppd_amqp_messages_total{result="requeued"}')).toBe(0);

    // --- every event published: the outbox empties (a confirmed event is deleted; a dead one stays)
    const outbox = () => db.prepare('SELECT state, COUNT(*) AS n FROM outbox GROUP BY state').all() as Array<{ state: string; n: number }>;
    await until(() => outbox().length === 0, 60_000, 'the outbox empty').catch((e: unknown) => {
      throw new Error(`${String(e)}: ${JSON.stringify(outbox())}`);
    });
    const reader = await amqplib.connect(node.url);
    cleanups.push(() => reader.close().catch(() => {}));
    const readerChannel = await reader.createChannel();
    const events = new Map<string, string[]>();
    let eventCount = 0;
    for (let m = await readerChannel.get(EVENTS_QUEUE, { noAck: true }); m !== false; m = await readerChannel.get(EVENTS_QUEUE, { noAck: true })) {
      const body = JSON.parse(m.content.toString()) as { messageId: string; status: string };
      events.set(body.messageId, [...(events.get(body.messageId) ?? []), body.status]);
      eventCount++;
    }
    const messages = stored();
    expect([...events.keys()].filter((id) => !messages.some((m) => m.id === id))).toEqual([]);
    // At least once each, in order: the first SUBMITTED, then the first SENT, then the first DELIVERED.
    const wrong = messages.flatMap((m) => {
      const seen = events.get(m.id) ?? [];
      const order = ['SUBMITTED', 'SENT', 'DELIVERED'].map((s) => seen.indexOf(s));
      return order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1]!)) ? [] : [{ id: m.id, seen }];
    });
    expect(wrong).toEqual([]);

    // --- a clean stop: nothing it held comes back to the queue
    daemon.child.kill('SIGTERM');
    expect((await daemon.exited()).code).toBe(0);
    // The broker URL's password was never logged, through every failed connect and reconnect.
    expect(JSON.stringify(daemon.events)).not.toContain('guest:guest@');
    expect((await readerChannel.checkQueue(QUEUE)).messageCount).toBe(0);

    const span = (xs: number[]) => (xs.length === 0 ? '' : ` (first stored ${Math.min(...xs)}…${Math.max(...xs)} ms after the stop)`);
    // eslint-disable-next-line no-console -- one line of what the run measured, for the CI log
    console.log(`broker restart: node boot ${firstBootMs} ms; ${restarts.map((r, i) => `${r.how} stop ${r.stopMs} ms, boot again ${r.bootMs} ms, `
      + `${byRestart[i]!.count} stored again after a commit whose ack was lost${span(byRestart[i]!.offsets)}`).join('; ')}; `
      + `${messages.length} stored for ${REQUESTS} requests + ${httpSent.length} over HTTP, ${byPublisher} republished by the publisher; `
      + `${eventCount} events for ${messages.length * 3} changes`);
  }, 300_000);
});
