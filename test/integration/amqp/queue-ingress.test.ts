/**
 * The queue ingress, against a real RabbitMQ (SMPPD_TEST_AMQP_URL): a message is acked
 * only after its commit; an invalid one is dead-lettered once with the five-field error in its
 * headers; QUEUE_FULL and store errors send it back to the queue after a delay; a dropped or
 * absent broker is reconnected to, and nothing is lost or stuck. smppd reaches the broker through
 * a TCP proxy the tests cut; the tests look at the queues through a connection of their own.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ERROR_CODE_HEADER, ERROR_HEADER } from '../../../src/ingress/amqp/queue-ingress.js';
import { HEADERS_DROPPED_HEADER } from '../../../src/ingress/amqp/republish.js';
import { ERROR_FIELDS } from '../../support/http.js';
import { AMQP_URL, noteSkipped, sleep, uniqueName, until } from './broker.js';
import { VALID, ingressHarness, type HarnessOptions } from './ingress-harness.js';

noteSkipped('queue ingress tests (test/integration/amqp/queue-ingress.test.ts)');

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const valid = VALID;
const harness = (o: HarnessOptions = {}) => ingressHarness(cleanups, o);

describe.skipIf(!AMQP_URL)('the queue ingress (RabbitMQ)', () => {
  it('keeps a message unacked until its commit, and acks it after', async () => {
    const h = await harness();
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    h.gate.held = true;
    // No messageId, no reference: nothing to know it again by (queue-dedup.test.ts has those).
    h.view.publishJson(h.queue, { ...valid, campaignName: 'one' });
    await until(() => h.gate.calls === 1, 10_000, 'the send to reach the store');
    // Delivered, not yet committed: when the connection goes, the broker has it back.
    expect(await h.view.ready(h.queue)).toBe(0);
    h.proxy.cut();
    await until(async () => (await h.view.ready(h.queue)) === 1, 10_000, 'the unacked message to return to the queue');
    expect(h.commits).toEqual([]);
    // The first commit completes with no channel to ack on; the broker delivers the message again
    // after the reconnect, and that one is committed and acked: at least once, never lost.
    h.release();
    h.proxy.restore();
    await until(() => h.commits.length === 2, 10_000, 'the redelivered message to be committed');
    expect(h.commits).toEqual(['one', 'one']);
    await until(() => h.ingress.inFlight === 0, 10_000, 'the ack');
    await h.ingress.stop();
    // Closed gracefully: an unacked message would be back in the queue now.
    expect(await h.view.ready(h.queue)).toBe(0);
    expect(await h.view.ready(h.deadQueue)).toBe(0);
  });

  it('commits and acks many messages, the prefetch keeping several in flight', async () => {
    const h = await harness({ prefetch: 50 });
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    for (let i = 0; i < 300; i++) h.view.publishJson(h.queue, { ...valid, campaignName: `m-${i}` });
    await until(() => h.commits.length === 300, 20_000, 'every message to be committed');
    await until(() => h.ingress.inFlight === 0, 10_000, 'the acks');
    await h.ingress.stop();
    expect(new Set(h.commits).size).toBe(300);
    expect(await h.view.ready(h.queue)).toBe(0);
    expect(h.settled).toEqual({ accepted: 300, dead: 0, requeued: 0, waiting: 0, duplicate: 0 });
  });

  describe('dead-letters an invalid message once, with the five-field error in its headers and its body kept', () => {
    const cases: Array<[string, string | object, number, string, string]> = [
      ['invalid JSON', '{"senderId": "MyBrand", ', 400, 'INVALID_JSON', 'not valid JSON'],
      ['not an object', '[1, 2]', 400, 'VALIDATION', 'the message body must be a JSON object'],
      ['an unknown field', { ...valid, to: '447700900123' }, 400, 'VALIDATION', 'to: unknown field; this API calls it destinationNumber'],
      ['a bad number', { ...valid, expiryHour: 'soon' }, 400, 'VALIDATION', 'expiryHour: must be a number'],
      ['a number out of range', { ...valid, expiryHour: 0 }, 400, 'VALIDATION', 'expiryHour: must be a whole number from 1'],
      ['a bad destination', { ...valid, destinationNumber: '+447700900123' }, 400, 'VALIDATION', 'destinationNumber:'],
      ['an unknown client', { ...valid, client: 'nobody' }, 403, 'CLIENT_NOT_ALLOWED', 'client: this queue may not send as that client'],
      ['a sender the client may not use', { ...valid, client: 'limited', senderId: 'Other' }, 403, 'SENDER_NOT_ALLOWED', 'senderId "Other" is not allowed'],
      ['TEXT that is not GSM-7 (refused by the acceptor)', { ...valid, message: 'Привет' }, 400, 'TEXT_NOT_GSM7', ''],
      ['a sender ID with a NUL (the HTTP API\'s sender rule)', { ...valid, senderId: 'AB\u0000\u00014477' }, 400, 'VALIDATION', 'senderId: must not hold U+0000'],
      ['a sender ID no network carries', { ...valid, senderId: '+4477009001' }, 400, 'VALIDATION', 'senderId: has no letter'],
      ['UNICODE with half a surrogate pair', { ...valid, messageType: 'UNICODE', message: 'hi \ud83d' }, 400, 'VALIDATION', 'message: holds an unpaired UTF-16 surrogate'],
      ['free text with a control character', { ...valid, campaignName: 'a\u001b[2Jb' }, 400, 'VALIDATION', 'campaignName: must not hold U+001B'],
    ];
    for (const [what, body, status, errorCode, text] of cases) {
      it(what, async () => {
        const h = await harness();
        await until(() => h.ingress.connected, 10_000, 'the consumer');
        const content = typeof body === 'string' ? body : JSON.stringify({ ...body, reference: 'ref-7' });
        h.view.publishJson(h.queue, content, { messageId: 'caller-id-1', correlationId: 'corr-1', headers: { 'x-app': 'shop' } });
        await until(async () => (await h.view.ready(h.deadQueue)) === 1, 10_000, 'the dead letter');
        await until(() => h.ingress.inFlight === 0, 10_000, 'the ack');
        await sleep(200); // a redelivery, if there were one, would show now
        const [dead, ...more] = await h.view.drain(h.deadQueue);
        expect(more).toEqual([]);
        expect(dead!.content.toString()).toBe(content);
        expect(dead!.properties).toMatchObject({ messageId: 'caller-id-1', correlationId: 'corr-1', contentType: 'application/json' });
        const headers = dead!.properties.headers ?? {};
        expect(headers['x-app']).toBe('shop');
        expect(headers[ERROR_CODE_HEADER]).toBe(errorCode);
        const error = JSON.parse(String(headers[ERROR_HEADER])) as Record<string, unknown>;
        expect(Object.keys(error)).toEqual(ERROR_FIELDS);
        expect(error).toMatchObject({ status, errorCode, requestUri: `amqp://${h.queue}` });
        expect(typeof error.error).toBe('string');
        expect(error.message).toContain(text);
        expect(h.commits).toEqual([]);
        await h.ingress.stop();
        expect(await h.view.ready(h.queue)).toBe(0);
        expect(h.settled).toEqual({ accepted: 0, dead: 1, requeued: 0, waiting: 0, duplicate: 0 });
      });
    }
  });

  it('a refused message whose headers leave no room for the error is dead-lettered without them, not sent round again', async () => {
    const h = await harness();
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    // The headers just fit amqplib's 64 KiB, and would not with the five-field error added.
    h.view.publishJson(h.queue, { ...valid, to: '1' }, { messageId: 'big-headers', headers: { 'x-app': 'a'.repeat(65_000) } });
    await until(async () => (await h.view.ready(h.deadQueue)) === 1, 10_000, 'the dead letter');
    const [dead] = await h.view.drain(h.deadQueue);
    expect(dead!.properties.messageId).toBe('big-headers');
    const headers = dead!.properties.headers ?? {};
    expect(headers[HEADERS_DROPPED_HEADER]).toBe(true);
    expect(headers['x-app']).toBeUndefined();
    expect(headers[ERROR_CODE_HEADER]).toBe('VALIDATION');
    await until(() => h.ingress.inFlight === 0, 10_000, 'the ack');
    expect(h.settled).toEqual({ accepted: 0, dead: 1, requeued: 0, waiting: 0, duplicate: 0 });
    expect(h.events('amqp_unavailable')).toBe(0);
  });

  it('QUEUE_FULL: the message goes back to the queue after a delay, and is accepted once there is room', async () => {
    const h = await harness({ maxQueued: 10 });
    h.gate.depth = 10;
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    h.view.publishJson(h.queue, { ...valid, campaignName: 'later' });
    await until(() => h.settled.requeued >= 1, 10_000, 'the message to be requeued');
    expect(h.commits).toEqual([]);
    // Not a hot loop: QUEUE_FULL says retry after 1 s, so 1.5 s see at most two more tries.
    const before = h.settled.requeued;
    await sleep(1_500);
    expect(h.settled.requeued - before).toBeLessThanOrEqual(2);
    expect(h.events('amqp_deferring')).toBe(1);
    h.gate.depth = 0;
    await until(() => h.commits.length === 1, 10_000, 'the message to be accepted');
    expect(h.commits).toEqual(['later']);
    await until(() => h.ingress.inFlight === 0, 10_000, 'the ack');
    await h.ingress.stop();
    expect(await h.view.ready(h.queue)).toBe(0);
    expect(await h.view.ready(h.deadQueue)).toBe(0);
    expect(h.events('amqp_accepting')).toBe(1);
  });

  it('a client at its clients[].maxQueued: its message goes back to its wait queue, not to the dead letters, and is accepted once it has room', async () => {
    const h = await harness({ clientMaxQueued: { app: 10 } });
    h.gate.depth = 10;
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    h.view.publishJson(h.queue, { ...valid, campaignName: 'capped' });
    await until(() => h.settled.requeued >= 1, 10_000, 'the message to be requeued');
    expect(h.commits).toEqual([]);
    h.gate.depth = 9;
    await until(() => h.commits.length === 1, 10_000, 'the message to be accepted');
    await until(() => h.ingress.inFlight === 0, 10_000, 'the ack');
    await h.ingress.stop();
    expect(h.settled.dead).toBe(0);
    expect(h.settled.waiting).toBe(1);
    for (const q of [h.queue, h.waitQueue('app'), h.deadQueue]) expect(await h.view.ready(q)).toBe(0);
  });

  it('a client at its clients[].maxQueued does not hold the prefetch the others share: their messages go past its own', async () => {
    const h = await harness({ clientMaxQueued: { app: 10 }, prefetch: 5 });
    h.gate.depth = 10; // all of it app's
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    for (let i = 0; i < 20; i++) h.view.publishJson(h.queue, { ...valid, client: 'app', campaignName: `a-${i}` });
    // Behind app's in the same queue, with a prefetch of 5.
    for (let i = 0; i < 3; i++) h.view.publishJson(h.queue, { ...valid, client: 'other', campaignName: `o-${i}` });
    await until(() => h.committed.length === 3, 10_000, 'the other client\'s messages');
    expect(h.committed.map((c) => c.campaignName)).toEqual(['o-0', 'o-1', 'o-2']);
    // app's wait in its own queue, and go once it has room: none lost, none twice, none dead.
    await until(async () => (await h.view.ready(h.queue)) === 0, 10_000, 'the send queue to empty');
    h.gate.depth = 0;
    await until(() => h.committed.length === 23, 15_000, 'app\'s messages, once it has room');
    expect(h.committed.filter((c) => c.client === 'app').map((c) => c.campaignName).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `a-${i}`).sort());
    await until(() => h.ingress.inFlight === 0, 10_000, 'the acks');
    await h.ingress.stop();
    expect(h.settled.dead).toBe(0);
    // Held for its cap, not its rate: not counted as rate-limited.
    expect(h.rateLimited).toEqual([]);
    for (const q of [h.queue, h.waitQueue('app'), h.deadQueue]) expect(await h.view.ready(q)).toBe(0);
  });

  it('a store error: the message goes back to the queue after a delay and is committed when the store works again', async () => {
    const h = await harness();
    h.gate.failures = 3;
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    const started = Date.now();
    h.view.publishJson(h.queue, { ...valid, campaignName: 'retried' });
    await until(() => h.commits.length === 1, 10_000, 'the commit');
    expect(h.gate.calls).toBe(4);
    expect(h.settled.requeued).toBe(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300); // three holds of at least 100 ms
    await until(() => h.ingress.inFlight === 0, 10_000, 'the ack');
    await h.ingress.stop();
    expect(await h.view.ready(h.queue)).toBe(0);
    expect(await h.view.ready(h.deadQueue)).toBe(0);
  });

  it('reconnects when the broker connection drops mid-run: nothing lost, nothing stuck', async () => {
    const h = await harness({ prefetch: 20 });
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    const total = 400;
    for (let i = 0; i < total; i++) h.view.publishJson(h.queue, { ...valid, campaignName: `m-${i}` });
    for (const after of [50, 200]) {
      await until(() => h.commits.length >= after, 20_000, `${after} commits`);
      h.proxy.cut();
      await until(() => !h.ingress.connected, 10_000, 'the ingress to notice');
      await sleep(300); // away for a while: attempts fail and back off
      h.proxy.restore();
    }
    await until(() => new Set(h.commits).size === total, 30_000, 'every message to be committed');
    await until(() => h.ingress.inFlight === 0, 10_000, 'nothing in flight');
    await h.ingress.stop();
    expect(await h.view.ready(h.queue)).toBe(0);
    expect(await h.view.ready(h.deadQueue)).toBe(0);
    // At least once: a commit whose ack the drop lost is delivered again; nothing else repeats.
    expect(h.commits.length - total).toBeLessThanOrEqual(2 * 20);
    // Logged once per change: up, down, up, down, up.
    expect(h.events('amqp_connected')).toBe(3);
    expect(h.events('amqp_unavailable')).toBe(2);
    expect(h.proxy.connections).toBe(3);
  });

  it('starts while the broker is away, and consumes once it is back', async () => {
    const h = await harness({ brokerAway: true });
    await sleep(300);
    expect(h.ingress.connected).toBe(false);
    expect(h.events('amqp_unavailable')).toBe(1);
    // Published before the ingress ever connected: the queue as smppd declares it.
    await h.view.channel.assertQueue(h.queue, { durable: true, deadLetterExchange: `${h.queue}.dead` });
    h.view.publishJson(h.queue, { ...valid, campaignName: 'waited' });
    h.proxy.restore();
    await until(() => h.commits.length === 1, 10_000, 'the commit');
    expect(h.commits).toEqual(['waited']);
    expect(h.events('amqp_connected')).toBe(1);
  });

  it('declares the queue durable, with its dead-letter exchange and queue', async () => {
    const h = await harness();
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    // Declaring with the same arguments succeeds only when they match what smppd declared.
    await h.view.channel.assertQueue(h.queue, { durable: true, deadLetterExchange: `${h.queue}.dead` });
    await h.view.channel.assertQueue(h.deadQueue, { durable: true });
    await h.view.channel.assertExchange(`${h.queue}.dead`, 'fanout', { durable: true });
  });

  it('with an exchange: binds the queue to it and consumes what is published there', async () => {
    const h = await harness({ exchange: true });
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    h.view.channel.publish(h.config.exchange!, 'send', Buffer.from(JSON.stringify({ ...valid, campaignName: 'via-exchange' })), { persistent: true });
    h.view.channel.publish(h.config.exchange!, 'other', Buffer.from(JSON.stringify({ ...valid, campaignName: 'elsewhere' })), { persistent: true });
    await until(() => h.commits.length === 1, 10_000, 'the commit');
    await sleep(200);
    expect(h.commits).toEqual(['via-exchange']);
  });

  it('a queue that exists with other arguments: the reason is logged, and smppd keeps trying', async () => {
    const h = await harness({ noStart: true });
    await h.view.channel.assertQueue(h.queue, { durable: true });
    h.ingress.start();
    await until(() => h.events('amqp_unavailable') === 1, 10_000, 'the failure to be logged');
    const line = h.logs.map((l) => JSON.parse(l) as { event?: string; reason?: string }).find((l) => l.event === 'amqp_unavailable');
    expect(line?.reason).toContain('PRECONDITION_FAILED');
    expect(line?.reason).toContain('x-dead-letter-exchange');
    await until(() => h.proxy.connections >= 3, 10_000, 'more attempts');
    expect(h.events('amqp_unavailable')).toBe(1);
    expect(h.ingress.connected).toBe(false);
  });

  it('replies to replyTo with the message id and the reference, or with the error', async () => {
    const h = await harness();
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    const replies = h.view.ownQueue(uniqueName('replies'));
    await h.view.channel.assertQueue(replies, { durable: false });
    h.view.publishJson(h.queue, { ...valid, reference: 'order-17' }, { replyTo: replies, correlationId: 'c-17' });
    h.view.publishJson(h.queue, { ...valid, to: '1', reference: 'order-18' }, { replyTo: replies, correlationId: 'c-18' });
    await until(async () => (await h.view.ready(replies)) === 2, 10_000, 'two replies');
    const got = (await h.view.drain(replies)).map((m) => ({ correlationId: m.properties.correlationId as string, body: JSON.parse(m.content.toString()) as Record<string, unknown> }));
    const ok = got.find((g) => g.correlationId === 'c-17')!;
    expect(ok.body.reference).toBe('order-17');
    const stored = await h.store.getMessage(String(ok.body.messageId));
    expect(stored).toMatchObject({ client: 'app', source: 'MyBrand', destination: '447700900123', status: 'SUBMITTED' });
    const refused = got.find((g) => g.correlationId === 'c-18')!;
    expect(refused.body).toMatchObject({ reference: 'order-18', error: { status: 400, errorCode: 'VALIDATION', requestUri: `amqp://${h.queue}` } });
  });

  it('stop returns held messages to the queue at once', async () => {
    const h = await harness();
    h.gate.failures = 1_000;
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    h.view.publishJson(h.queue, { ...valid, campaignName: 'held' });
    await until(() => h.gate.calls >= 1, 10_000, 'the first try');
    await h.ingress.stop();
    expect(await h.view.ready(h.queue)).toBe(1);
    expect(h.commits).toEqual([]);
  });
});
