/**
 * The daemon with its `amqp` section, as `smppd start` builds it: a send request published to
 * the queue becomes DELIVERED through the simulator, and its status events land on the events
 * exchange with routing keys status.<STATUS>; an invalid one is dead-lettered, never delivered.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../support/free-port.js';
import { startDaemon, type RunningDaemon } from '../../../src/cli/daemon.js';
import { parseConfig } from '../../../src/config/load.js';
import { SystemClock } from '../../../src/core/clock.js';
import { silentLog } from '../../../src/core/log.js';
import { Metrics } from '../../../src/observability/metrics.js';
import { AMQP_URL, BrokerProxy, BrokerView, noteSkipped, uniqueName, until } from './broker.js';

noteSkipped('daemon with amqp (test/integration/amqp/daemon-amqp.test.ts)');

const TOKEN = 'amqp-daemon-token-0123456789';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Whether the daemon has declared `queue`. A failed check closes its channel: each look gets a channel of its own. */
async function queueExists(view: BrokerView, queue: string): Promise<boolean> {
  const ch = await view.connection.createChannel();
  ch.on('error', () => {});
  const found = await ch.checkQueue(queue).then(() => true, () => false);
  await ch.close().catch(() => {});
  return found;
}

/** A send queue of our own and its dead-letter queue and exchange, deleted after the test. */
function ownSendQueue(view: BrokerView): string {
  const queue = view.ownQueue(uniqueName('sends'));
  view.ownQueue(`${queue}.dead`);
  view.ownExchange(`${queue}.dead`);
  view.ownQueue(`${queue}.wait.app`);
  return queue;
}

/** The daemon with the built-in simulator (receipts after 10 ms), a SQLite store in a folder of its own and `amqp: { <amqp> }`. */
async function startAmqpDaemon(amqp: string, binds: number, metrics?: Metrics): Promise<{ d: RunningDaemon; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'smppd-amqp-daemon-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const smscPort = await freePort();
  const config = await parseConfig([
    'log: { level: silent }',
    'http: { listen: "127.0.0.1:0" }',
    `clients: [{ name: app, token: ${TOKEN} }]`,
    'store: { path: smppd.db }',
    `amqp: { ${amqp} }`,
    `simulator: { enabled: true, port: ${smscPort}, systemId: amqp, password: amqppw, deliveryReceiptDelayMs: 10 }`,
    `upstreams: [{ name: sim, host: 127.0.0.1, port: ${smscPort}, systemId: amqp, password: amqppw, binds: ${binds} }]`,
    '',
  ].join('\n'), dir);
  const d = await startDaemon(config, { clock: new SystemClock(), log: silentLog, ...(metrics ? { metrics } : {}) });
  cleanups.push(() => d.stop());
  return { d, dir };
}

describe.skipIf(!AMQP_URL)('smppd start with amqp', () => {
  it('a queued send request is delivered and its events are published; an invalid one is dead-lettered; /metrics counts both', async () => {
    const view = await BrokerView.open();
    cleanups.push(() => view.close());
    const queue = ownSendQueue(view);
    const exchange = view.ownExchange(uniqueName('events'));
    const metrics = new Metrics(() => [], { processMetrics: false });
    const { d } = await startAmqpDaemon(`url: "${AMQP_URL}", queue: ${queue}, client: app, events: { exchange: ${exchange} }`, 1, metrics);

    // A queue of our own bound to every status event (the exchange declared as the daemon declares it).
    const seen = view.ownQueue(uniqueName('seen'));
    await view.channel.assertExchange(exchange, 'topic', { durable: true });
    await view.channel.assertQueue(seen, { durable: false });
    await view.channel.bindQueue(seen, exchange, 'status.#');
    await until(() => queueExists(view, queue), 10_000, 'the daemon to declare its send queue');

    view.publishJson(queue, { senderId: 'amqp', destinationNumber: '447700900123', message: 'via the queue', messageType: 'TEXT', reference: 'r-1' });
    view.publishJson(queue, { senderId: 'amqp', destinationNumber: '+447700900123', message: 'bad number', messageType: 'TEXT' });

    const events: Array<{ key: string; status: string; messageId: string }> = [];
    await until(async () => {
      for (const m of await view.drain(seen)) {
        const body = JSON.parse(m.content.toString()) as { status: string; messageId: string };
        events.push({ key: m.fields.routingKey, status: body.status, messageId: body.messageId });
      }
      return events.some((e) => e.status === 'DELIVERED');
    }, 15_000, 'DELIVERED on the events exchange');
    expect(events.map((e) => e.key)).toEqual(['status.SUBMITTED', 'status.SENT', 'status.DELIVERED']);
    expect(new Set(events.map((e) => e.messageId)).size).toBe(1);

    const dead = await view.drain(`${queue}.dead`);
    expect(dead).toHaveLength(1);
    expect(JSON.parse(String(dead[0]!.properties.headers?.['x-smppd-error']))).toMatchObject({ status: 400, errorCode: 'VALIDATION' });
    expect(await view.ready(queue)).toBe(0);
    const scraped = await (await fetch(`http://127.0.0.1:${d.http.port}/metrics`)).text();
    expect(scraped).toContain('smppd_amqp_messages_total{result="accepted"} 1');
    expect(scraped).toContain('smppd_amqp_messages_total{result="dead"} 1');
    expect(scraped).toContain('smppd_amqp_connected 1');
  }, 40_000);

  it('the broker connection is lost twice under load: every request published is delivered once, nothing stuck', async () => {
    const view = await BrokerView.open();
    cleanups.push(() => view.close());
    const proxy = await BrokerProxy.start();
    cleanups.push(() => proxy.close());
    const queue = ownSendQueue(view);
    const { dir } = await startAmqpDaemon(`url: "${proxy.url}", queue: ${queue}, client: app, reconnect: { initialSeconds: 0.05, maxSeconds: 0.2 }`, 2);
    await until(() => queueExists(view, queue), 10_000, 'the daemon to declare its send queue');

    const Database = (await import('better-sqlite3')).default;
    const db = new Database(join(dir, 'smppd.db'), { readonly: true });
    cleanups.push(() => { db.close(); });
    const destinations = () => (db.prepare('SELECT destination, status FROM messages').all() as Array<{ destination: string; status: string }>);
    const count = 300;
    for (let round = 0; round < 3; round++) {
      for (let i = round * 100; i < (round + 1) * 100; i++) {
        view.publishJson(queue, { senderId: 'amqp', destinationNumber: `4477009${String(i).padStart(5, '0')}`, message: `m${i}`, messageType: 'TEXT', reference: `r${i}` });
      }
      if (round === 2) break;
      // Cut while the round is being consumed, then let the daemon reconnect.
      await until(() => destinations().length >= round * 100 + 30, 10_000, `round ${round} under way`);
      proxy.cut();
      await new Promise((r) => setTimeout(r, 300));
      proxy.restore();
    }
    // Every request stored (at least once: one unacknowledged at a cut may be stored twice) and the queue empty.
    const stored = () => new Set(destinations().map((r) => r.destination)).size;
    await until(() => stored() === count, 30_000, 'every request stored').catch(async (e: unknown) => {
      throw new Error(`${String(e)}: stored ${stored()}, ready ${await view.ready(queue)}, dead ${await view.ready(`${queue}.dead`)}`);
    });
    await until(() => destinations().every((r) => r.status === 'DELIVERED'), 30_000, 'every message DELIVERED');
    await until(async () => (await view.ready(queue)) === 0, 10_000, 'the queue empty');
    expect(await view.ready(`${queue}.dead`)).toBe(0);
    // Stored twice only for what was unacknowledged at a cut: at most the prefetch per cut.
    expect(destinations().length - count).toBeLessThanOrEqual(2 * 500);
  }, 90_000);
});
