/**
 * Routing with two daemons on one PostgreSQL store: instance A has upstreams x and y, instance B
 * only y. Messages A routes to x are stored with their route and upstream, B (which routes every
 * number to y) never claims or re-routes them, and they reach x's SMSC through A alone; when x
 * fails over, A moves them to y, where they are stored and sent once.
 */
import { afterEach, expect, it } from 'vitest';
import { until } from '../../support/engine.js';
import type { Cleanups } from '../../support/daemon-child.js';
import { describePg, PG_URL, pgSchema } from '../postgres/pg-store.js';
import { Smsc, routingDaemon, smsc, untilAllFinal } from './rig.js';

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A schema of its own (dropped after the test), and the `store:` map of an instance on it. */
async function sharedSchema() {
  const schema = await pgSchema();
  cleanups.push(() => schema.cleanup());
  const store = (instanceId: string): string => `{ kind: postgres, url: "${PG_URL}", schema: ${schema.name}, instanceId: ${instanceId} }`;
  return { schema, store };
}

describePg('routing on a shared PostgreSQL store', () => {
  it('messages routed to x are claimed only by the instance with binds to x; the stored route and upstream are honoured', async () => {
    const { schema, store } = await sharedSchema();
    // x's SMSC is down at first: what A routes to x waits in the shared queue, in B's sight.
    const x = await new Smsc().start();
    await x.stop();
    cleanups.push(() => x.stop());
    const y = await smsc(cleanups);
    const a = await routingDaemon(cleanups, {
      store: store('host-a'),
      upstreams: [{ name: 'x', smsc: x }, { name: 'y', smsc: y }],
      routes: ['{ name: uk, prefix: "44", upstreams: [x] }', '{ name: rest, prefix: "", upstreams: [y] }'],
    });
    const b = await routingDaemon(cleanups, {
      store: store('host-b'),
      upstreams: [{ name: 'y', smsc: y }],
      routes: ['{ name: rest, prefix: "", upstreams: [y] }'],
    });
    await a.untilAvailable('y');
    await b.untilAvailable('y');
    // x failed over on A (no other upstream on its route): A queues what it routes there.
    await until(() => a.d.upstreams().some((u) => u.name === 'x' && u.failedOver), 10_000, 'x failed over on A');

    const toX = [];
    for (let i = 0; i < 10; i++) toX.push(await a.send(`4477003${String(i).padStart(5, '0')}`, `x ${i}`));
    // B is busy with y meanwhile, claiming from the same tables: its own sends, and A's to y.
    const toY = [];
    for (let i = 0; i < 10; i++) toY.push(await b.send(`4917003${String(i).padStart(5, '0')}`, `y ${i}`));
    for (let i = 10; i < 15; i++) toY.push(await a.send(`4917003${String(i).padStart(5, '0')}`, `y ${i}`));
    // B routes a 44 number to y, its only route: routing is each instance's, A's stored choice for x stays.
    toY.push(await b.send('447700499999', 'y from b'));
    expect(await untilAllFinal(b, toY.slice(0, 10).concat(toY.slice(15)))).toEqual(Array(11).fill('DELIVERED'));
    expect(await untilAllFinal(a, toY.slice(10, 15))).toEqual(Array(5).fill('DELIVERED'));

    const stored = await schema.sql<{ id: string; upstream: string; route: string | null; queued: number; claimed: number }>(
      `SELECT m.id, m.upstream, m.route, (COUNT(*) FILTER (WHERE p.state = 'queued' AND p.upstream = 'x'))::int AS queued,
              (COUNT(*) FILTER (WHERE p.claimed_by IS NOT NULL))::int AS claimed
       FROM messages m JOIN parts p ON p.message_id = m.id WHERE m.id = ANY($1) GROUP BY m.id, m.upstream, m.route`, [toX]);
    expect(stored).toHaveLength(10);
    for (const m of stored) expect(m).toMatchObject({ upstream: 'x', route: 'uk', queued: 1, claimed: 0 });
    expect(y.destinations().filter((d) => d.startsWith('4477003'))).toEqual([]);
    expect(await b.counter('smppd_dispatched_total', { upstream: 'x' })).toBe(0);

    await x.start();
    expect(await untilAllFinal(a, toX)).toEqual(Array(10).fill('DELIVERED'));
    expect(x.destinations().sort()).toEqual(Array.from({ length: 10 }, (_, i) => `4477003${String(i).padStart(5, '0')}`));
    expect(y.destinations().filter((d) => d.startsWith('4477003'))).toEqual([]);
    expect(y.destinations()).toContain('447700499999');
    await until(async () => (await a.counter('smppd_dispatched_total', { upstream: 'x' })) === 10, 5_000, 'A dispatched the ten to x');
  }, 60_000);

  it('the instance with binds to x moves x\'s queued messages to y when x fails over; they are stored on y and sent once', async () => {
    const { schema, store } = await sharedSchema();
    // x holds its one window slot for a minute: the messages behind it have no part on the wire.
    const x = await smsc(cleanups, { responseDelayMs: 60_000 });
    const y = await smsc(cleanups);
    const a = await routingDaemon(cleanups, {
      store: store('host-a'),
      upstreams: [{ name: 'x', smsc: x, extra: 'window: 1' }, { name: 'y', smsc: y }],
      routes: ['{ name: uk, prefix: "44", upstreams: [x, y] }'],
    });
    const b = await routingDaemon(cleanups, {
      store: store('host-b'),
      upstreams: [{ name: 'y', smsc: y }],
      routes: ['{ name: uk, prefix: "44", upstreams: [y] }'],
    });
    await a.untilAvailable('x');
    await a.untilAvailable('y');
    await b.untilAvailable('y');

    const ids = [];
    for (let i = 0; i < 10; i++) ids.push(await a.send(`4477004${String(i).padStart(5, '0')}`, `m ${i}`));
    await until(() => x.received().length === 1, 10_000, 'the first holding x\'s window');
    expect(await a.counter('smppd_route_sends_total', { route: 'uk', upstream: 'x' })).toBe(10);

    await x.stop();
    expect(await untilAllFinal(a, ids)).toEqual(Array(10).fill('DELIVERED'));
    const stored = await schema.sql<{ upstream: string; route: string; parts_on_y: number }>(
      `SELECT m.upstream, m.route, (COUNT(*) FILTER (WHERE p.upstream = 'y'))::int AS parts_on_y
       FROM messages m JOIN parts p ON p.message_id = m.id WHERE m.id = ANY($1) GROUP BY m.id, m.upstream, m.route`, [ids]);
    expect(stored).toEqual(Array(10).fill({ upstream: 'y', route: 'uk', parts_on_y: 1 }));
    const atY = y.destinations().filter((d) => d.startsWith('4477004'));
    expect(new Set(atY).size).toBe(10);
    expect(atY).toHaveLength(10);
    // Only A, which has binds to x, moved them.
    expect(await a.counter('smppd_failover_moved_total', { from: 'x', to: 'y' })).toBeGreaterThanOrEqual(9);
    expect(await b.counter('smppd_failover_moved_total')).toBe(0);
  }, 60_000);
});
