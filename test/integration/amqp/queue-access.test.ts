/**
 * Who a queue message may act as, against a real RabbitMQ (SMPPD_TEST_AMQP_URL): only a client
 * amqp.clients allows; with amqp.users, only the client the message's broker-checked user_id is
 * mapped to. The user_id cases need a second RabbitMQ user, made with rabbitmqctl for this file
 * and removed after it; without rabbitmqctl on the broker's host they are skipped.
 */
import amqplib, { type ChannelModel } from 'amqplib';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ERROR_CODE_HEADER, ERROR_HEADER } from '../../../src/ingress/amqp/queue-ingress.js';
import { TOKENS } from '../../support/http.js';
import { createRabbitUser } from '../../support/rabbitmq-user.js';
import { AMQP_URL, noteSkipped, sleep, until } from './broker.js';
import { VALID, ingressHarness, type Cleanups, type IngressHarness } from './ingress-harness.js';

noteSkipped('queue access tests (test/integration/amqp/queue-access.test.ts)');

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The refusal on the one dead letter of `h`, once it is there. */
async function deadLetter(h: IngressHarness): Promise<{ errorCode: string; error: Record<string, unknown>; body: Record<string, unknown> }> {
  await until(async () => (await h.view.ready(h.deadQueue)) === 1, 10_000, 'the dead letter');
  const [dead] = await h.view.drain(h.deadQueue);
  const headers = dead!.properties.headers ?? {};
  return { errorCode: String(headers[ERROR_CODE_HEADER]), error: JSON.parse(String(headers[ERROR_HEADER])) as Record<string, unknown>, body: JSON.parse(dead!.content.toString()) };
}

describe.skipIf(!AMQP_URL)('amqp.clients (RabbitMQ)', () => {
  it('a message acts only as a client the queue allows: another configured client is dead-lettered CLIENT_NOT_ALLOWED', async () => {
    const h = await ingressHarness(cleanups, { access: { clients: ['app', 'limited'], client: 'app' } });
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    h.view.publishJson(h.queue, { ...VALID, campaignName: 'default' });
    h.view.publishJson(h.queue, { ...VALID, client: 'limited', campaignName: 'named' });
    h.view.publishJson(h.queue, { ...VALID, client: 'other', campaignName: 'not allowed', reference: 'r-3' });
    const { errorCode, error, body } = await deadLetter(h);
    expect(errorCode).toBe('CLIENT_NOT_ALLOWED');
    expect(error).toEqual({ status: 403, error: 'Forbidden', message: 'client: this queue may not send as that client (amqp.clients)', errorCode: 'CLIENT_NOT_ALLOWED', requestUri: `amqp://${h.queue}` });
    expect(body.reference).toBe('r-3');
    await until(() => h.committed.length === 2, 10_000, 'the allowed ones');
    expect(h.committed.map((c) => [c.client, c.campaignName])).toEqual([['app', 'default'], ['limited', 'named']]);
  });
});

// A publisher of its own: made once for the file, at collection, so that the file can skip with one line.
const publisher = AMQP_URL ? await createRabbitUser(AMQP_URL, 'publisher') : 'no SMPPD_TEST_AMQP_URL';
const cannot = typeof publisher === 'string' ? publisher : null;
if (cannot !== null && AMQP_URL) {
  // eslint-disable-next-line no-console -- the file's one line about why part of it did not run
  console.log(`queue access tests with amqp.users: skipped; they need a second RabbitMQ user made with rabbitmqctl: ${cannot}`);
}
afterAll(async () => {
  if (typeof publisher !== 'string') await publisher.remove();
});

describe.skipIf(cannot !== null)('amqp.users: the broker-checked user_id decides (RabbitMQ)', () => {
  const user = (): { name: string; url: string } => {
    if (typeof publisher === 'string') throw new Error(publisher);
    return publisher;
  };

  /** A connection as the publisher's own RabbitMQ user. */
  async function asPublisher(): Promise<ChannelModel> {
    const connection = await amqplib.connect(user().url);
    cleanups.push(() => connection.close().catch(() => {}));
    return connection;
  }

  async function publishAs(connection: ChannelModel, queue: string, body: object, userId?: string): Promise<void> {
    const channel = await connection.createConfirmChannel();
    await new Promise<void>((resolve, reject) => channel.sendToQueue(queue, Buffer.from(JSON.stringify(body)), {
      persistent: true, contentType: 'application/json', ...(userId !== undefined ? { userId } : {}),
    }, (err) => (err ? reject(err as Error) : resolve())));
    await channel.close();
  }

  /** Clients: app (unlimited), limited (1/s, burst 1, sender MyBrand); the publisher's user is mapped to limited. */
  const usersHarness = (o: Parameters<typeof ingressHarness>[1] = {}) => ingressHarness(cleanups, {
    clients: [{ name: 'app', token: TOKENS.app }, { name: 'limited', token: TOKENS.limited, senders: ['MyBrand'], rateLimit: { perSecond: 1, burst: 1 } }],
    access: { clients: ['app', 'limited'], users: { [user().name]: 'limited' } },
    ...o,
  });

  it('a message published with the user_id of its connection acts as the client that user is mapped to', async () => {
    const h = await usersHarness();
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    const connection = await asPublisher();
    await publishAs(connection, h.queue, { ...VALID, campaignName: 'mapped' }, user().name);
    await publishAs(connection, h.queue, { ...VALID, client: 'limited', campaignName: 'agrees' }, user().name);
    await until(() => h.committed.length === 1, 10_000, 'the first');
    await until(() => h.committed.length === 2, 10_000, 'the second, at the client\'s rate');
    expect(h.committed.map((c) => [c.client, c.campaignName])).toEqual([['limited', 'mapped'], ['limited', 'agrees']]);
  });

  it('a client field that names another client is CLIENT_NOT_ALLOWED', async () => {
    const h = await usersHarness();
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    await publishAs(await asPublisher(), h.queue, { ...VALID, client: 'app', reference: 'r-1' }, user().name);
    const { errorCode, error } = await deadLetter(h);
    expect(errorCode).toBe('CLIENT_NOT_ALLOWED');
    expect(error.message).toContain('differs from the client this message\'s user_id stands for');
    expect(h.committed).toEqual([]);
  });

  it('a message without user_id is CLIENT_NOT_ALLOWED, whatever client it names', async () => {
    const h = await usersHarness();
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    h.view.publishJson(h.queue, { ...VALID, client: 'app' });
    const { errorCode, error } = await deadLetter(h);
    expect(errorCode).toBe('CLIENT_NOT_ALLOWED');
    expect(error.message).toContain('only with its user_id property');
  });

  it('the broker refuses a user_id that is not the publisher\'s own: another user cannot be impersonated', async () => {
    const h = await usersHarness();
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    const channel = await h.view.connection.createConfirmChannel();
    const closed = new Promise<string>((resolve) => channel.on('error', (e: Error) => resolve(e.message)));
    channel.sendToQueue(h.queue, Buffer.from(JSON.stringify(VALID)), { userId: user().name }, () => {});
    expect(await closed).toContain('PRECONDITION_FAILED');
    await sleep(300);
    expect(await h.view.ready(h.queue)).toBe(0);
    expect(h.committed).toEqual([]);
  });

  it('past its rate limit, a mapped message is set aside and still acts as its client when it comes back', async () => {
    const h = await usersHarness();
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    const connection = await asPublisher();
    for (let i = 0; i < 3; i++) await publishAs(connection, h.queue, { ...VALID, campaignName: `m-${i}` }, user().name);
    await until(() => h.committed.length === 3, 15_000, 'all three, one a second');
    expect(h.committed.map((c) => [c.client, c.campaignName])).toEqual([['limited', 'm-0'], ['limited', 'm-1'], ['limited', 'm-2']]);
    expect(h.settled).toMatchObject({ accepted: 3, dead: 0, waiting: 2 });
  });

  it('a message a publisher writes into a wait queue itself acts as its own client, never as the wait queue\'s', async () => {
    const h = await usersHarness();
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    const connection = await asPublisher();
    await publishAs(connection, h.waitQueue('app'), { ...VALID, campaignName: 'forged' }, user().name);
    await until(() => h.committed.length === 1, 10_000, 'the commit');
    expect(h.committed.map((c) => c.client)).toEqual(['limited']);
    await publishAs(connection, h.waitQueue('app'), { ...VALID, campaignName: 'no user' });
    const { errorCode } = await deadLetter(h);
    expect(errorCode).toBe('CLIENT_NOT_ALLOWED');
  });

  it('what smppd sets aside carries its own user_id: a URL whose user is not the connection\'s is a clear start-up failure, not a loop', async () => {
    // smppd's URL says guest, but its connection is the publisher's: every user_id guest would be refused.
    const h = await usersHarness({ connect: (_url, options) => amqplib.connect(user().url, options) });
    await until(() => h.events('amqp_unavailable') === 1, 10_000, 'the failure to be logged');
    const line = h.logs.map((l) => JSON.parse(l) as { event?: string; reason?: string }).find((l) => l.event === 'amqp_unavailable');
    expect(line?.reason).toContain('refuses user_id "guest"');
    expect(h.ingress.connected).toBe(false);
    expect(h.committed).toEqual([]);
  });
});
