/**
 * Suspending an upstream through the admin API, over real sockets: under load its route fails
 * over at once, nothing new reaches its SMSC once the suspend has answered (what was on the wire
 * finishes), nothing is lost or sent twice, its binds stay up; resumed, it takes sends again. A
 * suspension survives a restart; a route with no other upstream keeps its messages queued.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../../support/engine.js';
import { recordingLog } from '../../support/http.js';
import type { Cleanups } from '../../support/daemon-child.js';
import { ADMIN_CONFIG, resume, status, suspend } from './admin.js';
import { routingDaemon, smsc, untilAllFinal, type RoutingDaemon } from './rig.js';

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const number = (i: number): string => `4477005${String(i).padStart(5, '0')}`;

/** Sends numbers[from, to) from `senders` concurrent callers; the ids in `ids` at their index. */
async function sendRange(r: RoutingDaemon, ids: string[], from: number, to: number, senders = 8): Promise<void> {
  let next = from;
  await Promise.all(Array.from({ length: senders }, async () => {
    while (next < to) {
      const i = next++;
      ids[i] = await r.send(number(i), `load ${i}`);
    }
  }));
}

function lines(log: string[], event: string): Array<Record<string, unknown>> {
  return log.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === event);
}

describe('suspending an upstream', () => {
  it('under load: its route fails over at once, nothing new reaches it after the suspend, nothing is lost; resumed, it sends again', async () => {
    // a is slow (20 a second, answers after 30 ms, at most 5 outstanding): a backlog waits for it.
    const a = await smsc(cleanups, { responseDelayMs: 30 });
    const b = await smsc(cleanups);
    const log: string[] = [];
    const r = await routingDaemon(cleanups, {
      upstreams: [{ name: 'a', smsc: a, extra: 'ratePerBind: 20, burst: 1, window: 5', failoverAfterSeconds: 300 }, { name: 'b', smsc: b }],
      routes: ['{ name: uk, prefix: "44", upstreams: [a, b] }'],
      extra: ADMIN_CONFIG, log: recordingLog(log),
    });
    await r.untilAvailable('a');
    await r.untilAvailable('b');

    const N = 240;
    const ids: string[] = [];
    const sending = sendRange(r, ids, 0, 160);
    await until(async () => a.received().length >= 10 && (await r.d.queue()).queued >= 30, 15_000, 'a under way with a backlog');
    const answer = await suspend(r, 'a', 'maintenance window');
    const atSuspend = a.received().length;
    expect(answer).toMatchObject({ upstream: 'a', suspended: { by: 'ops', reason: 'maintenance window' } });
    await sending;
    // Sends after the suspend: the route's next upstream at once (a's failoverAfterSeconds is 300).
    await sendRange(r, ids, 160, 200);

    expect(await untilAllFinal(r, ids.slice(0, 200), 30_000)).toEqual(ids.slice(0, 200).map(() => 'DELIVERED'));
    // What a got after the suspend answered: only what was on its wire then (its window).
    expect(a.received().length - atSuspend).toBeLessThanOrEqual(5);
    for (let i = 160; i < 200; i++) expect(a.destinations()).not.toContain(number(i));
    // Its bind stayed up (receipts for what it had sent came back on it); the status says who and why.
    const s = await status(r);
    const sa = s.upstreams.find((u) => u.name === 'a')!;
    expect(sa).toMatchObject({ available: false, suspended: { by: 'ops', reason: 'maintenance window' }, queued: 0 });
    expect(sa.binds[0]!.state).toBe('bound');
    expect((await r.readyz()).status).toBe(200);
    expect(await r.counter('smppd_upstream_suspended', { upstream: 'a' })).toBe(1);

    await resume(r, 'a');
    await sendRange(r, ids, 200, N, 2);
    expect(await untilAllFinal(r, ids, 30_000)).toEqual(ids.map(() => 'DELIVERED'));
    for (let i = 200; i < N; i++) expect(a.destinations()).toContain(number(i));
    // Each message reached one SMSC once: none lost, none sent twice.
    const received = [...a.destinations(), ...b.destinations()];
    expect(received.length).toBe(N);
    expect(new Set(received).size).toBe(N);
    expect(await r.counter('smppd_upstream_suspended', { upstream: 'a' })).toBe(0);
    expect(lines(log, 'upstream_suspended')).toEqual([expect.objectContaining({ upstream: 'a', by: 'ops', reason: 'maintenance window' })]);
    expect(lines(log, 'upstream_resumed')).toEqual([expect.objectContaining({ upstream: 'a', by: 'ops' })]);
    expect(lines(log, 'route_failover')).toEqual([expect.objectContaining({ route: 'uk', from: 'a', to: 'b' })]);
  }, 90_000);

  it('holds across a restart, and is idempotent', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'smppd-suspend-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const a = await smsc(cleanups);
    const b = await smsc(cleanups);
    const options = {
      upstreams: [{ name: 'a', smsc: a }, { name: 'b', smsc: b }], routes: ['{ prefix: "", upstreams: [a, b] }'],
      store: `{ path: ${join(dir, 'smppd.db')} }`, extra: ADMIN_CONFIG,
    };
    const first = await routingDaemon(cleanups, options);
    const made = await suspend(first, 'a', 'swap the certificate');
    // Again: the suspension in force stays as it was.
    expect(await suspend(first, 'a', 'another reason')).toEqual(made);
    await first.d.stop();

    const second = await routingDaemon(cleanups, options);
    await second.untilAvailable('b');
    await until(async () => (await status(second)).upstreams.find((u) => u.name === 'a')!.binds[0]!.state === 'bound', 10_000, 'a bound');
    expect((await status(second)).upstreams.find((u) => u.name === 'a')!.suspended).toEqual(made.suspended);
    const ids = [await second.send('447700900001'), await second.send('447700900002')];
    expect(await untilAllFinal(second, ids)).toEqual(['DELIVERED', 'DELIVERED']);
    expect(a.received()).toEqual([]);
    expect(await resume(second, 'a')).toEqual({ upstream: 'a', suspended: null });
    expect(await resume(second, 'a')).toEqual({ upstream: 'a', suspended: null });
    const back = await second.send('447700900003');
    expect(await untilAllFinal(second, [back])).toEqual(['DELIVERED']);
    expect(a.destinations()).toEqual(['447700900003']);
  }, 60_000);

  it('with no other upstream on the route, its messages wait queued and /readyz is not ready; resumed, they go', async () => {
    const a = await smsc(cleanups);
    const r = await routingDaemon(cleanups, { upstreams: [{ name: 'a', smsc: a }], extra: ADMIN_CONFIG });
    await r.untilAvailable('a');
    await suspend(r, 'a');
    const ids = [await r.send('447700900001'), await r.send('447700900002')];
    // Past a failover pass or two: still queued, nothing sent.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await Promise.all(ids.map((id) => r.status(id)))).toEqual(['SUBMITTED', 'SUBMITTED']);
    expect(a.received()).toEqual([]);
    expect((await status(r)).upstreams[0]).toMatchObject({ name: 'a', queued: 2, available: false });
    const ready = await r.readyz();
    expect(ready.status).toBe(503);
    expect(ready.body.reasons).toEqual(['route default: no upstream available (a 1 of 1 binds bound, suspended)']);
    await resume(r, 'a');
    expect(await untilAllFinal(r, ids)).toEqual(['DELIVERED', 'DELIVERED']);
    expect((await r.readyz()).status).toBe(200);
  }, 30_000);
});
