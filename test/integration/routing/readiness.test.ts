/**
 * /readyz per route, over real sockets: a backup account idle by design (its SMSC down) does not
 * make the instance look broken while its route's first upstream is up; a route left with no
 * available upstream makes it 503, naming that route; a route that gets one back makes it ready.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../../support/engine.js';
import type { Cleanups } from '../../support/daemon-child.js';
import { routingDaemon, smsc, Smsc } from './rig.js';

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** An SMSC that is down: its port known (it ran once), nothing listening. */
async function downSmsc(): Promise<Smsc> {
  const s = await new Smsc().start();
  await s.stop();
  cleanups.push(() => s.stop());
  return s;
}

describe('/readyz with routes', () => {
  it('stays ready while an idle backup has no bind; 503 once the route has no upstream; ready again when the backup comes up', async () => {
    const main = await smsc(cleanups);
    const backup = await downSmsc();
    const r = await routingDaemon(cleanups, {
      upstreams: [{ name: 'main', smsc: main }, { name: 'backup', smsc: backup }],
      routes: ['{ prefix: "", upstreams: [main, backup] }'],
    });
    await until(async () => (await r.readyz()).status === 200, 10_000, 'ready with main bound');
    expect((await r.readyz()).body).toEqual({
      status: 'ready',
      upstreams: [{ name: 'main', available: true, bound: 1, binds: 1 }, { name: 'backup', available: false, bound: 0, binds: 1 }],
    });

    await main.stop();
    await until(async () => (await r.readyz()).status === 503, 10_000, 'not ready with neither bound');
    expect((await r.readyz()).body).toEqual({
      status: 'not ready',
      reasons: ['route *: no upstream available (main 0 of 1 binds bound, backup 0 of 1 binds bound)'],
      upstreams: [{ name: 'main', available: false, bound: 0, binds: 1 }, { name: 'backup', available: false, bound: 0, binds: 1 }],
    });

    await backup.start();
    await until(async () => (await r.readyz()).status === 200, 10_000, 'ready again on the backup');
    expect((await r.readyz()).body.upstreams).toEqual([
      { name: 'main', available: false, bound: 0, binds: 1 }, { name: 'backup', available: true, bound: 1, binds: 1 },
    ]);
  });

  it('one route with no available upstream makes it 503, naming only that route, while the others can send', async () => {
    const uk = await smsc(cleanups);
    const eu = await downSmsc();
    const r = await routingDaemon(cleanups, {
      upstreams: [{ name: 'uk', smsc: uk }, { name: 'eu', smsc: eu }],
      routes: ['{ prefix: "44", upstreams: [uk, eu] }', '{ prefix: ["49", "33"], upstreams: [eu] }'],
    });
    await r.untilAvailable('uk');
    const { status, body } = await r.readyz();
    expect(status).toBe(503);
    expect(body.reasons).toEqual(['route 49,33: no upstream available (eu 0 of 1 binds bound)']);
    await eu.start();
    await until(async () => (await r.readyz()).status === 200, 10_000, 'ready once eu is bound');
  });
});
