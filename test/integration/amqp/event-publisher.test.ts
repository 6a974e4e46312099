/**
 * Events to a topic exchange, against a real RabbitMQ (SMPPD_TEST_AMQP_URL): each event
 * lands in a bound queue under `status.<STATUS>` or `inbound`, a confirm is an ok outcome and
 * anything else a failure, so the EventDispatcher's retries apply; and end to end, a stored
 * message's SUBMITTED event reaches the exchange through the dispatcher and the store's outbox.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { amqpEndpoint, type AmqpEventsConfig } from '../../../src/config/amqp-schema.js';
import { SystemClock } from '../../../src/core/clock.js';
import { silentLog } from '../../../src/core/log.js';
import { Acceptor } from '../../../src/dispatch/accept.js';
import { withAmqpEvents } from '../../../src/events/amqp-event-clients.js';
import { AmqpEventPublisher } from '../../../src/events/amqp-event-publisher.js';
import { EventDispatcher } from '../../../src/events/event-dispatcher.js';
import { COMPOSE, openTestStore, recordingLog } from '../../support/http.js';
import { AMQP_URL, BrokerProxy, BrokerView, noteSkipped, sleep, uniqueName, until } from './broker.js';

noteSkipped('event publisher tests (test/integration/amqp/event-publisher.test.ts)');

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const status = (s: string, messageId = 'm-1'): string => JSON.stringify({ type: 'status', messageId, channel: 'sms', destination: '447700900123', status: s, timestamp: '2026-01-01T00:00:00.000Z' });
const inbound = JSON.stringify({ type: 'inbound', channel: 'sms', inboundId: 42, source: '447700900123', destination: '12345', text: 'STOP', receivedAt: '2026-01-01T00:00:00.000Z' });

async function harness(o: { mandatory?: boolean; timeoutMs?: number; bindings?: string[] } = {}) {
  const proxy = await BrokerProxy.start();
  cleanups.push(() => proxy.close());
  const view = await BrokerView.open();
  cleanups.push(() => view.close());
  const exchange = view.ownExchange(uniqueName('events'));
  const logs: string[] = [];
  const publisher = new AmqpEventPublisher({
    url: proxy.url, endpoint: amqpEndpoint(proxy.url), exchange, timeoutMs: o.timeoutMs ?? 5_000, mandatory: o.mandatory ?? true,
    reconnect: { initialMs: 50, maxMs: 300, multiplier: 2 }, clock: new SystemClock(), log: recordingLog(logs),
  });
  cleanups.push(() => publisher.stop());
  publisher.start();
  await until(() => publisher.connected, 10_000, 'the publisher');
  const queue = view.ownQueue(uniqueName('hooks'));
  await view.channel.assertQueue(queue, { durable: false });
  for (const key of o.bindings ?? ['status.*', 'inbound']) await view.channel.bindQueue(queue, exchange, key);
  return { proxy, view, exchange, queue, publisher, logs };
}

describe.skipIf(!AMQP_URL)('the event publisher (RabbitMQ)', () => {
  it('publishes status and inbound events under their routing keys; each confirm is an ok outcome', async () => {
    const h = await harness();
    const sink = h.publisher.sink('shop');
    expect(sink.origin).toBe(`${amqpEndpoint(h.proxy.url)} exchange ${h.exchange}`);
    expect(sink.origin).not.toContain('guest');
    const outcomes = await Promise.all([sink.post(status('SUBMITTED'), 1), sink.post(status('DELIVERED'), 2), sink.post(inbound, 3)]);
    for (const o of outcomes) expect(o).toMatchObject({ ok: true, status: 200 });
    await until(async () => (await h.view.ready(h.queue)) === 3, 10_000, 'three events');
    const got = await h.view.drain(h.queue);
    expect(got.map((m) => m.fields.routingKey)).toEqual(['status.SUBMITTED', 'status.DELIVERED', 'inbound']);
    expect(got.map((m) => m.content.toString())).toEqual([status('SUBMITTED'), status('DELIVERED'), inbound]);
    expect(got[1]!.properties).toMatchObject({ messageId: '2', contentType: 'application/json', deliveryMode: 2, appId: 'smppd' });
    expect(got[1]!.properties.headers).toMatchObject({ 'x-smppd-event-id': 2, 'x-smppd-client': 'shop' });
  });

  it('an event no queue is bound for is a failure (mandatory), so it is retried rather than dropped', async () => {
    const h = await harness({ bindings: ['status.DELIVERED'] });
    const sink = h.publisher.sink('shop');
    expect(await sink.post(status('FAILED'), 7)).toMatchObject({ ok: false, failure: 'network', error: expect.stringContaining('NO_ROUTE') });
    expect(await sink.post(status('DELIVERED'), 8)).toMatchObject({ ok: true });
    expect((await h.view.drain(h.queue)).map((m) => m.fields.routingKey)).toEqual(['status.DELIVERED']);
  });

  it('with mandatory: false, an unroutable event is confirmed (the broker drops it)', async () => {
    const h = await harness({ mandatory: false, bindings: ['inbound'] });
    expect(await h.publisher.sink('shop').post(status('FAILED'), 9)).toMatchObject({ ok: true });
  });

  it('an event without a type to route by is a failure', async () => {
    const h = await harness();
    expect(await h.publisher.sink('shop').post('{"type":"other"}', 10)).toMatchObject({ ok: false, error: expect.stringContaining('BAD_EVENT') });
  });

  it('while the broker is away every publish fails at once; after the reconnect they succeed', async () => {
    const h = await harness();
    const sink = h.publisher.sink('shop');
    h.proxy.cut();
    await until(() => !h.publisher.connected, 10_000, 'the publisher to notice');
    expect(await sink.post(status('SENT'), 11)).toMatchObject({ ok: false, failure: 'network', error: expect.stringContaining('NOT_CONNECTED') });
    h.proxy.restore();
    await until(() => h.publisher.connected, 10_000, 'the reconnect');
    expect(await sink.post(status('SENT'), 12)).toMatchObject({ ok: true });
    expect((await h.view.drain(h.queue)).map((m) => m.properties.messageId)).toEqual(['12']);
    const events = h.logs.map((l) => (JSON.parse(l) as { event: string }).event);
    expect(events.filter((e) => e === 'amqp_unavailable')).toHaveLength(1);
    expect(events.filter((e) => e === 'amqp_connected')).toHaveLength(2);
  });

  it('a publish whose connection drops before its confirm is a failure, not a hang', async () => {
    const h = await harness();
    const sink = h.publisher.sink('shop');
    const pending = Promise.all(Array.from({ length: 200 }, (_, i) => sink.post(status('SENT', `m-${i}`), 100 + i)));
    h.proxy.cut();
    const outcomes = await pending;
    // Each one either confirmed before the cut, or failed: none is left waiting.
    expect(outcomes).toHaveLength(200);
    for (const o of outcomes) if (!o.ok) expect(o.failure).toBe('network');
  });

  it('the sinks share one connection, closed when the last sink is closed', async () => {
    const h = await harness();
    const a = h.publisher.sink('a');
    const b = h.publisher.sink('b');
    await a.close();
    expect(h.publisher.connected).toBe(true);
    expect(await a.post(status('SENT'), 1)).toMatchObject({ ok: false, error: expect.stringContaining('CLOSED') });
    await b.close();
    expect(h.publisher.connected).toBe(false);
  });

  it('end to end: a stored message\'s SUBMITTED event reaches the exchange through the dispatcher', async () => {
    const h = await harness();
    const { store, cleanup } = await openTestStore();
    cleanups.push(cleanup);
    const clock = new SystemClock();
    const events: AmqpEventsConfig = { exchange: h.exchange, concurrency: 4, timeoutSeconds: 5, retry: { initialSeconds: 0.05, maxSeconds: 0.2 }, maxAgeHours: 1, mandatory: true };
    const clients = withAmqpEvents([], ['shop', 'quiet'], { ...events, clients: ['shop'] }, h.publisher);
    expect(clients.map((c) => c.name)).toEqual(['shop']);
    const dispatcher = new EventDispatcher({ store, clients, clock, log: silentLog, pollMs: 20 });
    const acceptor = new Acceptor({ store, clock, upstreams: [{ name: 'sim', compose: COMPOSE }], maxQueued: 1_000, wantsEvents: (c) => dispatcher.has(c) });
    dispatcher.start();
    cleanups.push(() => dispatcher.stop());
    const { messageId } = await acceptor.send({ client: 'shop', senderId: 'Shop', destination: '447700900123', message: 'Hi', messageType: 'TEXT' });
    await acceptor.send({ client: 'quiet', senderId: 'Quiet', destination: '447700900123', message: 'Hi', messageType: 'TEXT' });
    await until(async () => (await h.view.ready(h.queue)) >= 1, 10_000, 'the event');
    await sleep(200);
    const [event, ...more] = await h.view.drain(h.queue);
    expect(more).toEqual([]);
    expect(event!.fields.routingKey).toBe('status.SUBMITTED');
    expect(JSON.parse(event!.content.toString())).toMatchObject({ type: 'status', messageId, status: 'SUBMITTED' });
    expect(event!.properties.headers).toMatchObject({ 'x-smppd-client': 'shop' });
    await until(async () => (await store.outboxDepth()).every((d) => d.pending === 0), 10_000, 'the outbox to empty');
  });
});
