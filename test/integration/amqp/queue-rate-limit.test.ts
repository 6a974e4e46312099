/**
 * clients[].rateLimit on the queue ingress, against a real RabbitMQ (SMPPD_TEST_AMQP_URL): a
 * message past its client's limit is not dead-lettered but set aside in the client's wait queue
 * and sent, in order, when its token comes; one client's flood does not hold the prefetch the
 * others need; a reload applies to the messages waiting; nothing is lost across a stop.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ClientRateLimiter } from '../../../src/api/client-rate-limiter.js';
import { ManualClock } from '../../../src/core/clock.js';
import { CLIENT_HEADER, RECEIVED_AT_HEADER } from '../../../src/ingress/amqp/queue-ingress.js';
import { TOKENS } from '../../support/http.js';
import { AMQP_URL, noteSkipped, sleep, until } from './broker.js';
import { VALID, ingressHarness, type Cleanups, type Commit, type HarnessOptions } from './ingress-harness.js';

noteSkipped('queue rate limit tests (test/integration/amqp/queue-rate-limit.test.ts)');

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** `flood` limited to perSecond/burst; `app` unlimited. */
function clientsWith(perSecond: number, burst: number) {
  return [
    { name: 'app', token: TOKENS.app },
    { name: 'flood', token: TOKENS.limited, rateLimit: { perSecond, burst } },
  ];
}

const harness = (perSecond: number, burst: number, o: HarnessOptions = {}) => ingressHarness(cleanups, { clients: clientsWith(perSecond, burst), ...o });

/** The most commits of `client` in any window of `windowMs`. */
function mostInWindow(commits: Commit[], client: string, windowMs: number): number {
  const at = commits.filter((c) => c.client === client).map((c) => c.at);
  let most = 0;
  for (let i = 0, j = 0; i < at.length; i++) {
    while (at[i]! - at[j]! >= windowMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

const of = (commits: Commit[], client: string): string[] => commits.filter((c) => c.client === client).map((c) => c.campaignName);

describe.skipIf(!AMQP_URL)('clients[].rateLimit on the queue (RabbitMQ)', () => {
  it('sends a client\'s messages past its limit from its wait queue, in order, never faster than its rate; none is dead-lettered', async () => {
    const h = await harness(10, 2);
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    const total = 25;
    for (let i = 0; i < total; i++) h.view.publishJson(h.queue, { ...VALID, client: 'flood', campaignName: `f-${i}` });
    await until(() => h.committed.length === total, 20_000, 'every message to be committed');
    expect(of(h.committed, 'flood')).toEqual(Array.from({ length: total }, (_, i) => `f-${i}`));
    // burst + rate per second, and one more for a window's edges.
    expect(mostInWindow(h.committed, 'flood', 1000)).toBeLessThanOrEqual(2 + 10 + 1);
    expect(h.settled.waiting).toBeGreaterThanOrEqual(total - 2 - 3);
    expect(h.settled.dead).toBe(0);
    expect(h.rateLimited.every((c) => c === 'flood')).toBe(true);
    await until(() => h.ingress.inFlight === 0, 10_000, 'the acks');
    await h.ingress.stop();
    for (const q of [h.queue, h.waitQueue('flood'), h.deadQueue]) expect(await h.view.ready(q)).toBe(0);
  });

  it('one client\'s flood does not starve another client\'s messages of the prefetch', async () => {
    const h = await harness(2, 1, { prefetch: 10 });
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    const flood = 300;
    for (let i = 0; i < flood; i++) h.view.publishJson(h.queue, { ...VALID, client: 'flood', campaignName: `f-${i}` });
    // Behind the flood in the same queue, with a prefetch of 10.
    for (let i = 0; i < 5; i++) h.view.publishJson(h.queue, { ...VALID, client: 'app', campaignName: `a-${i}` });
    const started = Date.now();
    await until(() => of(h.committed, 'app').length === 5, 20_000, 'the other client\'s messages');
    const elapsedSeconds = (Date.now() - started) / 1000;
    expect(of(h.committed, 'app')).toEqual(['a-0', 'a-1', 'a-2', 'a-3', 'a-4']);
    expect(of(h.committed, 'flood').length).toBeLessThanOrEqual(1 + Math.ceil(2 * elapsedSeconds) + 1);
    // The flood waits in its own queue, its prefetch (50) in smppd's memory, the rest on the broker.
    await until(async () => (await h.view.ready(h.queue)) === 0, 10_000, 'the send queue to empty');
    await h.ingress.stop();
    const waiting = await h.view.ready(h.waitQueue('flood'));
    expect(waiting + of(h.committed, 'flood').length).toBe(flood);
    const [first] = await h.view.drain(h.waitQueue('flood'));
    expect(first!.properties.headers?.[CLIENT_HEADER]).toBe('flood');
    expect(JSON.parse(first!.content.toString())).toMatchObject({ client: 'flood' });
  });

  it('a reload applies the new limit to the messages already waiting', async () => {
    const h = await harness(1, 1);
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    for (let i = 0; i < 20; i++) h.view.publishJson(h.queue, { ...VALID, client: 'flood', campaignName: `f-${i}` });
    await until(() => h.committed.length >= 2, 10_000, 'the first sends');
    await sleep(300);
    expect(h.committed.length).toBeLessThan(20);
    h.ingress.replaceClients(clientsWith(1000, 1000));
    await until(() => h.committed.length === 20, 10_000, 'the rest, at the new rate');
    expect(of(h.committed, 'flood')).toEqual(Array.from({ length: 20 }, (_, i) => `f-${i}`));
  });

  it('a stop returns the messages waiting to their wait queue; the next start sends them: nothing lost', async () => {
    const h = await harness(1, 1);
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    for (let i = 0; i < 10; i++) h.view.publishJson(h.queue, { ...VALID, client: 'flood', campaignName: `f-${i}` });
    await until(() => h.committed.length >= 1 && h.settled.waiting >= 9, 10_000, 'the rest to be set aside');
    await h.ingress.stop();
    const sent = h.committed.length;
    expect(await h.view.ready(h.waitQueue('flood'))).toBe(10 - sent);
    const next = h.newIngress(clientsWith(1000, 1000));
    next.start();
    await until(() => h.committed.length === 10, 10_000, 'the waiting messages, after the restart');
    expect(of(h.committed, 'flood')).toEqual(Array.from({ length: 10 }, (_, i) => `f-${i}`));
  });

  it('shares the client\'s bucket with the HTTP API: tokens taken elsewhere are not taken again', async () => {
    const clock = new ManualClock();
    const limiter = new ClientRateLimiter(clientsWith(1, 3), clock);
    const h = await harness(1, 3, { rateLimiter: limiter });
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    for (let i = 0; i < 3; i++) expect(limiter.take('flood')).toBe(0); // three sends over HTTP
    for (let i = 0; i < 4; i++) h.view.publishJson(h.queue, { ...VALID, client: 'flood', campaignName: `f-${i}` });
    await until(() => h.settled.waiting === 4, 10_000, 'the queue messages to be set aside');
    await sleep(300);
    expect(h.committed).toEqual([]);
    clock.advance(2000); // two tokens: the line's timer (system time) finds them when it fires
    await until(() => h.committed.length === 2, 10_000, 'two sends');
    await sleep(1500);
    expect(of(h.committed, 'flood')).toEqual(['f-0', 'f-1']);
  });

  it('a schedule is checked against when the message was first read, not when it came back from its wait queue', async () => {
    const h = await harness(1000, 1000);
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    const minutes = (n: number): string => new Date(Date.now() + n * 60_000).toISOString().slice(0, 19).replace('T', ' ');
    const scheduled = { ...VALID, client: 'flood', isSchedule: true, time: minutes(-5), gmt: '+00:00' };
    // Set aside ten minutes ago, scheduled for five minutes ago: in the future when it was first read.
    h.view.publishJson(h.waitQueue('flood'), { ...scheduled, campaignName: 'waited' }, { headers: { [RECEIVED_AT_HEADER]: Date.now() - 10 * 60_000 } });
    await until(() => h.committed.length === 1, 10_000, 'the commit');
    expect(of(h.committed, 'flood')).toEqual(['waited']);
    // Straight to the send queue, the same time is past.
    h.view.publishJson(h.queue, { ...scheduled, campaignName: 'late' });
    await until(async () => (await h.view.ready(h.deadQueue)) === 1, 10_000, 'the dead letter');
    const [dead] = await h.view.drain(h.deadQueue);
    expect(String(dead!.properties.headers?.['x-smppd-error'])).toContain('time: is in the past');
  });

  it('what it sets aside carries when it was first read', async () => {
    const h = await harness(1, 1);
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    const before = Date.now();
    for (let i = 0; i < 2; i++) h.view.publishJson(h.queue, { ...VALID, client: 'flood', campaignName: `f-${i}` });
    await until(() => h.settled.waiting === 1, 10_000, 'the second to be set aside');
    await h.ingress.stop();
    const [aside] = await h.view.drain(h.waitQueue('flood'));
    const at = aside!.properties.headers?.[RECEIVED_AT_HEADER] as number;
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(Date.now());
  });

  it('the wait queue deleted while running: declared again, and its client\'s messages still go out', async () => {
    const h = await harness(5, 1);
    await until(() => h.ingress.connected, 10_000, 'the consumer');
    await h.view.channel.deleteQueue(h.waitQueue('flood'));
    await until(() => h.events('amqp_unavailable') === 1 || h.proxy.connections >= 2, 10_000, 'the ingress to notice');
    await until(() => h.ingress.connected, 10_000, 'the consumer again');
    for (let i = 0; i < 6; i++) h.view.publishJson(h.queue, { ...VALID, client: 'flood', campaignName: `f-${i}` });
    await until(() => h.committed.length === 6, 15_000, 'every message');
    expect(of(h.committed, 'flood')).toEqual(Array.from({ length: 6 }, (_, i) => `f-${i}`));
  });
});
