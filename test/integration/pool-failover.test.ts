import { afterEach, describe, expect, it } from 'vitest';
import { SystemClock } from '../../src/core/clock.js';
import { silentLog } from '../../src/core/log.js';
import { Pool } from '../../src/smpp/pool.js';
import { SmscSimulator } from '../../src/simulator/simulator.js';
import { noEngineMetrics } from '../../src/smpp/engine-metrics.js';
import { part, until, upstream } from '../support/engine.js';

const clock = new SystemClock();
const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function simulator(behaviour: ConstructorParameters<typeof SmscSimulator>[0]['behaviour'] = {}): Promise<{ sim: SmscSimulator; port: number }> {
  const sim = new SmscSimulator({ host: '127.0.0.1', port: 0, accounts: [{ systemId: 'smppclient1', password: 'password' }], record: true, behaviour }, clock, silentLog);
  const { port } = await sim.start();
  cleanup.push(() => sim.stop());
  return { sim, port };
}

/** One upstream whose two binds go to two different SMSC endpoints. */
function twoEndpointPool(portA: number, portB: number): Pool {
  const u = upstream({ port: portA, binds: 2, window: 20 });
  u.binds[1]!.connect = { ...u.binds[1]!.connect, port: portB };
  const pool = new Pool({ upstreams: [u], clock, log: silentLog, metrics: noEngineMetrics });
  pool.start();
  cleanup.push(() => pool.stop(100));
  return pool;
}

describe('pool', () => {
  it('one bind that never comes up does not stall the others', async () => {
    const { sim, port } = await simulator();
    const dead = await simulator();
    await dead.sim.stop(); // its port now refuses connections
    const pool = twoEndpointPool(port, dead.port);
    const outcomes = await Promise.all(Array.from({ length: 100 }, (_, i) => pool.submit('sim', [part(`4913${i}`)])));
    expect(outcomes.every((o) => o.parts[0]!.kind === 'accepted')).toBe(true);
    expect(sim.counters().totals.submitsReceived).toBe(100);
    expect(pool.stats()[1]!.state).not.toBe('bound');
  });

  it('a bind that goes down with work outstanding hands it to the other bind', async () => {
    const a = await simulator();
    const b = await simulator({ responseDelayMs: 60_000 });
    const pool = twoEndpointPool(a.port, b.port);
    await until(() => pool.stats().every((s) => s.state === 'bound'), 5_000, 'both bound');
    const results = Promise.all(Array.from({ length: 200 }, (_, i) => pool.submit('sim', [part(`4914${i}`)])));
    await until(() => b.sim.counters().totals.submitsReceived === 20, 5_000, 'B holding a full window');
    await b.sim.stop(); // B dies with 20 unanswered
    const outcomes = await results;
    expect(outcomes.every((o) => o.parts[0]!.kind === 'accepted')).toBe(true);
    const atA = new Set(a.sim.recordedSubmits().map((s) => s.destinationAddr));
    const unansweredAtB = b.sim.recordedSubmits().map((s) => s.destinationAddr);
    for (const dest of unansweredAtB) expect(atA.has(dest)).toBe(true);
  });

  it('graceful stop: waits for outstanding responses, then unbinds', async () => {
    const { sim, port } = await simulator({ responseDelayMs: 200 });
    const pool = new Pool({ upstreams: [upstream({ port, binds: 1, window: 50 })], clock, log: silentLog, metrics: noEngineMetrics });
    pool.start();
    await until(() => pool.stats()[0]!.state === 'bound', 5_000, 'bound');
    const results = Promise.all(Array.from({ length: 80 }, (_, i) => pool.submit('sim', [part(`4912${i}`)])));
    await until(() => sim.counters().totals.submitsReceived === 50, 5_000, 'window full');
    await pool.stop(5_000);
    const kinds = (await results).map((o) => o.parts[0]!.kind);
    expect(kinds.filter((k) => k === 'accepted')).toHaveLength(50); // every outstanding one was answered
    expect(kinds.filter((k) => k === 'unsent')).toHaveLength(30); // the queued ones come back, never half-sent
    await until(() => sim.counters().totals.unbindsReceived === 1, 5_000, 'unbind at SMSC');
    expect(pool.stats()[0]!.state).toBe('stopped');
  });

  it('withdrawUnstarted gives back the queued messages with no part accepted, each part withdrawn, with the attempts the SMSC never answered', async () => {
    const { sim, port } = await simulator();
    const pool = new Pool({ upstreams: [upstream({ port, binds: 1, window: 5 })], clock, log: silentLog, metrics: noEngineMetrics });
    cleanup.push(() => pool.stop(100));
    // Not started: nothing is bound, so every message waits in the queue.
    const waiting = Array.from({ length: 3 }, (_, i) => pool.submit('sim', [part(`4915${i}`), part(`4915${i}`)], i));
    expect(pool.withdrawUnstarted('sim')).toBe(3);
    const outcomes = await Promise.all(waiting);
    expect(outcomes.map((o) => o.parts)).toEqual([0, 1, 2].map((attempts) => [
      { kind: 'unsent', reason: 'withdrawn', attempts }, { kind: 'unsent', reason: 'withdrawn' },
    ]));
    expect(pool.queued('sim')).toBe(0);
    expect(sim.counters().totals.submitsReceived).toBe(0);
  });

  it('a message\'s prior attempts count toward maxAttempts: one with 2 of 3 used is sent once more, then FAILED', async () => {
    const { sim, port } = await simulator({ submitStatus: { 0x08: 1 } }); // ESME_RSYSERR: retryable
    const pool = new Pool({ upstreams: [upstream({ port, binds: 1, window: 5, maxAttempts: 3 })], clock, log: silentLog, metrics: noEngineMetrics });
    pool.start();
    cleanup.push(() => pool.stop(100));
    const outcome = await pool.submit('sim', [part('4916000')], 2);
    expect(outcome.parts[0]).toMatchObject({ kind: 'failed', attempts: 3 });
    expect(sim.counters().totals.submitsReceived).toBe(1);
  });

  it('suspended, an upstream starts no message: those waiting and those handed over come back withdrawn, started ones finish, its bind stays up', async () => {
    const { sim, port } = await simulator({ responseDelayMs: 100 });
    const pool = new Pool({ upstreams: [upstream({ port, binds: 1, window: 2 })], clock, log: silentLog, metrics: noEngineMetrics });
    pool.start();
    cleanup.push(() => pool.stop(100));
    await until(() => pool.stats()[0]!.state === 'bound', 5_000, 'bound');
    // Two 2-part messages take the window; three more wait.
    const started = [pool.submit('sim', [part('4917001'), part('4917001')]), pool.submit('sim', [part('4917002'), part('4917002')])];
    const waiting = Array.from({ length: 3 }, (_, i) => pool.submit('sim', [part(`491710${i}`)]));
    await until(() => sim.counters().totals.submitsReceived === 2, 5_000, 'the window full');
    pool.suspend('sim', true);
    const later = await pool.submit('sim', [part('4917200')]);
    expect(later.parts).toEqual([{ kind: 'unsent', reason: 'withdrawn', attempts: 0 }]);
    for (const o of await Promise.all(waiting)) expect(o.parts[0]).toMatchObject({ kind: 'unsent', reason: 'withdrawn' });
    // The started messages go on to their second parts, and end accepted.
    for (const o of await Promise.all(started)) expect(o.parts.map((p) => p.kind)).toEqual(['accepted', 'accepted']);
    expect(sim.recordedSubmits().map((s) => s.destinationAddr).sort()).toEqual(['4917001', '4917001', '4917002', '4917002']);
    expect(pool.stats()[0]!.state).toBe('bound');
    pool.suspend('sim', false);
    expect((await pool.submit('sim', [part('4917300')])).parts[0]!.kind).toBe('accepted');
  });
});
