/**
 * Queue messages committed once (amqp.dedupHours), against a real RabbitMQ: a message with an id
 * (its AMQP messageId, else its reference) delivered again after its commit — its ack lost with
 * the connection, or with the process (a new ingress on the same store) — is acked without being
 * stored again, and its replyTo gets the first one's message id; the same id with another body is
 * dead-lettered IDEMPOTENCY_KEY_REUSED; a message without an id is delivered at least once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ERROR_CODE_HEADER } from '../../../src/ingress/amqp/queue-ingress.js';
import { AMQP_URL, noteSkipped, sleep, uniqueName, until } from './broker.js';
import { VALID, ingressHarness, type HarnessOptions, type IngressHarness } from './ingress-harness.js';

noteSkipped('queue dedup tests (test/integration/amqp/queue-dedup.test.ts)');

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const harness = (o: HarnessOptions = {}) => ingressHarness(cleanups, o);

async function replyQueue(h: IngressHarness): Promise<string> {
  const replies = h.view.ownQueue(uniqueName('replies'));
  await h.view.channel.assertQueue(replies, { durable: false });
  return replies;
}

const replyBodies = async (h: IngressHarness, queue: string) => (await h.view.drain(queue)).map((m) => JSON.parse(m.content.toString()) as Record<string, unknown>);

/**
 * Publishes `body`, holds its commit, cuts smppd's connection (the message goes back to the
 * queue unacked), then lets the commit finish: the message is committed, and its ack is lost.
 */
async function commitWithLostAck(h: IngressHarness, body: object, options: object): Promise<void> {
  await until(() => h.ingress.connected, 10_000, 'the consumer');
  h.gate.held = true;
  h.view.publishJson(h.queue, body, options);
  await until(() => h.gate.calls === 1, 10_000, 'the send to reach the store');
  h.proxy.cut();
  await until(async () => (await h.view.ready(h.queue)) === 1, 10_000, 'the unacked message to return to the queue');
  h.release();
  await until(() => h.commits.length === 1, 10_000, 'the first commit');
}

describe.skipIf(!AMQP_URL)('the queue ingress knows a message again by its id (RabbitMQ)', () => {
  it('a message redelivered after its commit (the ack lost with the connection) is acked, not stored again; replyTo gets the first id', async () => {
    const h = await harness();
    const replies = await replyQueue(h);
    await commitWithLostAck(h, { ...VALID, campaignName: 'once', reference: 'order-1' }, { replyTo: replies, correlationId: 'c-1' });
    h.proxy.restore();
    await until(() => h.settled.duplicate === 1, 10_000, 'the redelivery to be settled');
    await until(() => h.ingress.inFlight === 0, 10_000, 'the ack');
    expect(h.commits).toEqual(['once']);
    await until(async () => (await h.view.ready(replies)) === 1, 10_000, 'the reply');
    const [reply] = await replyBodies(h, replies);
    expect(reply).toEqual({ messageId: expect.any(String), reference: 'order-1' });
    expect(await h.store.getMessage(String(reply?.messageId))).toMatchObject({ status: 'SUBMITTED', client: 'app' });
    await h.ingress.stop();
    expect(await h.view.ready(h.queue)).toBe(0);
    expect(await h.view.ready(h.deadQueue)).toBe(0);
  });

  it('after a crash between the commit and the ack (another process on the same store), the redelivery is not stored again', async () => {
    const h = await harness();
    const replies = await replyQueue(h);
    await commitWithLostAck(h, { ...VALID, campaignName: 'crash' }, { messageId: 'amqp-id-7', replyTo: replies });
    // The process is gone: a new one, on the same store, with nothing of the first in memory.
    await h.ingress.stop();
    const restarted = h.newIngress();
    restarted.start();
    h.proxy.restore();
    await until(() => h.settled.duplicate === 1, 10_000, 'the redelivery to be settled');
    await until(() => restarted.inFlight === 0, 10_000, 'the ack');
    expect(h.commits).toEqual(['crash']);
    await until(async () => (await h.view.ready(replies)) === 1, 10_000, 'the reply');
    const [reply] = await replyBodies(h, replies);
    expect(await h.store.getMessage(String(reply?.messageId))).toMatchObject({ status: 'SUBMITTED' });
    await restarted.stop();
    expect(await h.view.ready(h.queue)).toBe(0);
  });

  it('a publisher\'s re-send is stored once; the same id with another body is dead-lettered IDEMPOTENCY_KEY_REUSED', async () => {
    const h = await harness();
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    const replies = await replyQueue(h);
    h.view.publishJson(h.queue, { ...VALID, campaignName: 'a', reference: 'r-9' }, { replyTo: replies });
    await until(() => h.commits.length === 1, 10_000, 'the first');
    // The same message laid out otherwise is the same message.
    h.view.publishJson(h.queue, { reference: 'r-9', campaignName: 'a', ...VALID }, { replyTo: replies });
    h.view.publishJson(h.queue, { ...VALID, campaignName: 'b', reference: 'r-9' }, { replyTo: replies });
    await until(() => h.settled.duplicate === 1 && h.settled.dead === 1, 10_000, 'both settled');
    expect(h.commits).toEqual(['a']);
    const [dead] = await h.view.drain(h.deadQueue);
    expect(dead?.properties.headers?.[ERROR_CODE_HEADER]).toBe('IDEMPOTENCY_KEY_REUSED');
    await until(async () => (await h.view.ready(replies)) === 3, 10_000, 'three replies');
    const [first, again, refused] = await replyBodies(h, replies);
    expect(again).toEqual(first);
    expect(refused).toMatchObject({ reference: 'r-9', error: { status: 422, errorCode: 'IDEMPOTENCY_KEY_REUSED', requestUri: `amqp://${h.queue}` } });
  });

  it('ids are per client, and a message without messageId or reference is stored each time it comes', async () => {
    const h = await harness();
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    h.view.publishJson(h.queue, { ...VALID, campaignName: 'app' }, { messageId: 'same' });
    h.view.publishJson(h.queue, { ...VALID, client: 'other', campaignName: 'other' }, { messageId: 'same' });
    h.view.publishJson(h.queue, { ...VALID, campaignName: 'plain' });
    h.view.publishJson(h.queue, { ...VALID, campaignName: 'plain' });
    await until(() => h.commits.length === 4, 10_000, 'four commits');
    expect([...h.commits].sort()).toEqual(['app', 'other', 'plain', 'plain']);
    expect(h.settled.duplicate).toBe(0);
  });

  it('with amqp.dedupHours 0, a redelivery after the commit is stored again (at least once)', async () => {
    const h = await harness({ dedupHours: 0 });
    await commitWithLostAck(h, { ...VALID, campaignName: 'twice', reference: 'r-1' }, {});
    h.proxy.restore();
    await until(() => h.commits.length === 2, 10_000, 'the redelivered message to be committed');
    await sleep(100);
    expect(h.commits).toEqual(['twice', 'twice']);
  });
});
