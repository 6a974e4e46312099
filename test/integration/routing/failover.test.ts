/**
 * Failover between two SMSCs over real sockets: the route's first SMSC killed mid-load (its
 * later sends and its queued messages go to the second, every message ends DELIVERED, none sent
 * twice but the uncertain ones), and back again (once it returns, new sends go to it), with a
 * warning in the log each way.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../../support/engine.js';
import { recordingLog } from '../../support/http.js';
import type { Cleanups } from '../../support/daemon-child.js';
import { routingDaemon, smsc, untilAllFinal } from './rig.js';

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The lines of `event`, parsed. */
function linesOf(lines: string[], event: string): Array<Record<string, unknown>> {
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === event);
}

describe('failover between SMSCs', () => {
  it('the first SMSC killed mid-load: later sends and queued messages go to the next, every message ends DELIVERED, none sent twice but uncertain ones', async () => {
    // a sends slowly (20 a second, answers after 30 ms), so a backlog is queued for it when it dies.
    const a = await smsc(cleanups, { responseDelayMs: 30 });
    const b = await smsc(cleanups);
    const lines: string[] = [];
    const r = await routingDaemon(cleanups, {
      upstreams: [{ name: 'a', smsc: a, extra: 'ratePerBind: 20, burst: 1, window: 5' }, { name: 'b', smsc: b }],
      routes: ['{ prefix: "44", upstreams: [a, b] }'],
      log: recordingLog(lines),
    });
    await r.untilAvailable('a');
    await r.untilAvailable('b');

    const N = 200;
    const LATER = 50;
    const numbers = Array.from({ length: N }, (_, i) => `4477001${String(i).padStart(5, '0')}`);
    const ids: string[] = [];
    let next = 0;
    const sender = (end: number) => async (): Promise<void> => {
      while (next < end) {
        const i = next++;
        ids[i] = await r.send(numbers[i]!, `load ${i}`);
      }
    };
    const sending = Promise.all(Array.from({ length: 8 }, sender(N - LATER)));
    // Mid-load: a has sent some, and more wait for it.
    await until(async () => {
      const q = await r.d.queue();
      return a.received().length >= 20 && q.queued + q.inflight >= 40;
    }, 15_000, 'a under way with a backlog');
    await a.stop();
    await sending;
    // The route's later sends, once a is down.
    await r.untilAvailable('a', false);
    await Promise.all(Array.from({ length: 4 }, sender(N)));

    expect(await untilAllFinal(r, ids)).toEqual(ids.map(() => 'DELIVERED'));
    const atA = a.destinations();
    const atB = b.destinations();
    const received = [...atA, ...atB];
    expect(new Set(received).size).toBe(N);
    const uncertain = await r.counter('smppd_uncertain_outcomes_total', { upstream: 'a' });
    // Sent twice: only what was on a's wire, unanswered, when it died.
    expect(received.length - N).toBeLessThanOrEqual(uncertain);
    expect(received.length).toBeLessThanOrEqual(N + uncertain);
    for (const n of atB.filter((d) => atA.includes(d))) expect(atB.filter((d) => d === n)).toHaveLength(1);
    // Both ways to b: messages queued for a moved there, and sends after a died routed there.
    expect(await r.counter('smppd_failover_moved_total', { from: 'a', to: 'b' })).toBeGreaterThan(0);
    const routedToB = await r.counter('smppd_route_sends_total', { route: '44', upstream: 'b' });
    expect(routedToB).toBeGreaterThanOrEqual(LATER);
    for (const n of numbers.slice(N - LATER)) expect(atA).not.toContain(n);
    expect(atB.length).toBeGreaterThan(routedToB);
    expect(await r.counter('smppd_route_failovers_total', { route: '44', from: 'a', to: 'b' })).toBe(1);
    expect(linesOf(lines, 'route_failover')).toEqual([expect.objectContaining({ level: 'warn', route: '44', from: 'a', to: 'b' })]);
    expect(linesOf(lines, 'failover_moved').length).toBeGreaterThan(0);
  }, 60_000);

  it('the SMSC returns: new sends go back to it, and the log says so', async () => {
    const a = await smsc(cleanups);
    const b = await smsc(cleanups);
    const lines: string[] = [];
    const r = await routingDaemon(cleanups, {
      upstreams: [{ name: 'a', smsc: a }, { name: 'b', smsc: b }],
      routes: ['{ prefix: "", upstreams: [a, b] }'],
      log: recordingLog(lines),
    });
    await r.untilAvailable('a');
    await r.untilAvailable('b');
    const sendFive = async (from: number): Promise<string[]> => {
      const ids = [];
      for (let i = from; i < from + 5; i++) ids.push(await r.send(`4477002${String(i).padStart(5, '0')}`));
      return ids;
    };
    const ids = await sendFive(0);
    // Settled before a goes: none of them is left uncertain to be sent again elsewhere.
    expect(await untilAllFinal(r, ids)).toEqual(ids.map(() => 'DELIVERED'));
    expect(a.received()).toHaveLength(5);

    await a.stop();
    await r.untilAvailable('a', false);
    ids.push(...await sendFive(5));
    await until(() => b.received().length === 5, 10_000, 'the next five at b');

    await a.start();
    await r.untilAvailable('a');
    ids.push(...await sendFive(10));
    await until(() => a.received().length === 10, 10_000, 'the last five at a');
    expect(await untilAllFinal(r, ids)).toEqual(ids.map(() => 'DELIVERED'));
    expect(a.destinations().slice(5)).toEqual(Array.from({ length: 5 }, (_, i) => `4477002${String(10 + i).padStart(5, '0')}`));
    expect(b.received()).toHaveLength(5);
    expect(linesOf(lines, 'route_failover')).toEqual([expect.objectContaining({ level: 'warn', route: '*', from: 'a', to: 'b' })]);
    expect(linesOf(lines, 'route_returned')).toEqual([expect.objectContaining({ level: 'warn', route: '*', upstream: 'a', from: 'b' })]);
    expect(await r.counter('smppd_route_sends_total', { route: '*', upstream: 'a' })).toBe(10);
    expect(await r.counter('smppd_route_sends_total', { route: '*', upstream: 'b' })).toBe(5);

    // A graceful stop takes every bind down: no route is failing over for that.
    await r.d.stop();
    expect(linesOf(lines, 'route_failover')).toHaveLength(1);
    expect(await r.counter('smppd_route_failovers_total')).toBe(1);
  }, 60_000);
});
