/**
 * A suspension on a shared PostgreSQL store: made on one instance, it reaches the other within a
 * few seconds (each reads the suspensions again every SUSPENSIONS_REFRESH_MS), and so does its end.
 */
import { afterEach, expect, it } from 'vitest';
import { SUSPENSIONS_REFRESH_MS } from '../../../src/cli/admin-api.js';
import { until } from '../../support/engine.js';
import type { Cleanups } from '../../support/daemon-child.js';
import { describePg, PG_URL, pgSchema } from '../postgres/pg-store.js';
import { ADMIN_CONFIG, resume, status, suspend } from './admin.js';
import { routingDaemon, smsc, untilAllFinal, type RoutingDaemon } from './rig.js';

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const suspendedOn = async (r: RoutingDaemon, upstream: string): Promise<boolean> =>
  (await status(r)).upstreams.find((u) => u.name === upstream)!.suspended !== null;

describePg('suspending an upstream on a shared PostgreSQL store', () => {
  it('one instance\'s suspend and resume reach the other, which routes around the upstream meanwhile', async () => {
    const schema = await pgSchema();
    cleanups.push(() => schema.cleanup());
    const store = (id: string): string => `{ kind: postgres, url: "${PG_URL}", schema: ${schema.name}, instanceId: ${id} }`;
    const a = await smsc(cleanups);
    const b = await smsc(cleanups);
    const options = (id: string) => ({
      upstreams: [{ name: 'a', smsc: a, failoverAfterSeconds: 300 }, { name: 'b', smsc: b }], routes: ['{ prefix: "", upstreams: [a, b] }'],
      store: store(id), extra: ADMIN_CONFIG,
    });
    const one = await routingDaemon(cleanups, options('host-1'));
    const two = await routingDaemon(cleanups, options('host-2'));
    for (const r of [one, two]) for (const u of ['a', 'b']) await r.untilAvailable(u);

    await suspend(one, 'a', 'maintenance');
    await until(() => suspendedOn(two, 'a'), SUSPENSIONS_REFRESH_MS * 3, 'the suspension seen on host-2');
    expect((await status(two)).upstreams.find((u) => u.name === 'a')!.suspended).toMatchObject({ by: 'ops', reason: 'maintenance' });
    const ids = [await two.send('447700900001'), await two.send('447700900002')];
    expect(await untilAllFinal(two, ids)).toEqual(['DELIVERED', 'DELIVERED']);
    expect(a.received()).toEqual([]);

    await resume(two, 'a');
    await until(async () => !(await suspendedOn(one, 'a')), SUSPENSIONS_REFRESH_MS * 3, 'the resume seen on host-1');
    const back = await one.send('447700900003');
    expect(await untilAllFinal(one, [back])).toEqual(['DELIVERED']);
    expect(a.destinations()).toEqual(['447700900003']);
  }, 60_000);
});
