/**
 * `onUncertain: resend` when the SMSC never answers: each part is sent again up to
 * retry.maxAttempts, then FAILED with a reason that says the resends ran out (not the `fail`
 * policy's), and a warning names the part. Over real sockets to the simulator, which drops the
 * link on every submit_sm or never answers, and a real SQLite store.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SystemClock } from '../../src/core/clock.js';
import { silentLog } from '../../src/core/log.js';
import { Acceptor } from '../../src/dispatch/accept.js';
import { Dispatcher } from '../../src/dispatch/dispatcher.js';
import { partResult } from '../../src/dispatch/part-result.js';
import type { BehaviourPatch } from '../../src/simulator/behaviour.js';
import { SmscSimulator } from '../../src/simulator/simulator.js';
import type { Pool } from '../../src/smpp/pool.js';
import { makePool, part, recordingMetrics, until, type TestUpstream } from '../support/engine.js';
import { COMPOSE, recordingLog } from '../support/http.js';
import { storeFolder } from '../support/sqlite-store.js';

const clock = new SystemClock();
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function simulator(behaviour: BehaviourPatch): Promise<{ sim: SmscSimulator; port: number }> {
  const sim = new SmscSimulator({ host: '127.0.0.1', port: 0, accounts: [{ systemId: 'smppclient1', password: 'password' }], record: true, behaviour }, clock, silentLog);
  const { port } = await sim.start();
  cleanups.push(() => sim.stop());
  return { sim, port };
}

function started(pool: Pool): Pool {
  pool.start();
  cleanups.push(() => pool.stop(100));
  return pool;
}

describe('onUncertain: resend runs out of attempts', () => {
  it('a link that drops on every submit_sm: the part is FAILED saying the resends ran out, and a warning names it', async () => {
    const { sim, port } = await simulator({ dropAfterSubmits: 1 });
    const folder = storeFolder();
    cleanups.push(() => folder.cleanup());
    const store = await folder.open();
    const lines: string[] = [];
    const pool = started(makePool({ port, onUncertain: 'resend', maxAttempts: 3 }, clock));
    const dispatcher = new Dispatcher({
      store, pool, clock, log: recordingLog(lines), upstreams: [{ name: 'sim', maxInPool: 10, onUncertain: 'resend' }], pollMs: 20,
    });
    await dispatcher.start();
    cleanups.push(() => dispatcher.stop());
    const acceptor = new Acceptor({ store, clock, upstreams: [{ name: 'sim', compose: COMPOSE }], maxQueued: 1_000 });
    const { messageId } = await acceptor.send({ client: 'app', senderId: 'smppd', destination: '4915112345678', message: 'hello', messageType: 'TEXT' });
    dispatcher.wake();

    await until(async () => (await store.getMessage(messageId))?.status === 'FAILED', 10_000, 'FAILED');
    const message = (await store.getMessage(messageId))!;
    expect(message.reason).toBe('uncertain: the link dropped before the submit_sm_resp after 3 attempts (onUncertain: resend, retry.maxAttempts used up)');
    expect(message.reason).not.toContain('onUncertain: fail');
    // Each attempt reached the SMSC, and none more.
    expect(sim.recordedSubmits()).toHaveLength(3);
    const warned = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['event'] === 'uncertain_resend_exhausted');
    expect(warned).toEqual([expect.objectContaining({
      level: 'warn', upstream: 'sim', messageId, part: 1, cause: 'connection_lost', attempts: 3,
    })]);
  });

  it('an SMSC that never answers: after the last timeout and its grace for a late answer, the part is uncertain for lack of attempts', async () => {
    const { sim, port } = await simulator({ responseDelayMs: 60_000 });
    const settings: TestUpstream = { port, onUncertain: 'resend', maxAttempts: 2, responseTimeoutMs: 150 };
    const pool = started(makePool(settings, clock));
    const outcome = await pool.submit('sim', [part('4915112345678')]);
    expect(outcome.parts).toEqual([{ kind: 'uncertain', cause: 'timeout', attempts: 2, why: 'attempts' }]);
    expect(sim.recordedSubmits()).toHaveLength(2);
    expect(partResult(1, 0, outcome.parts[0], 1_000)).toMatchObject({
      kind: 'final', status: 'FAILED', attempts: 2,
      reason: 'uncertain: no submit_sm_resp in time after 2 attempts (onUncertain: resend, retry.maxAttempts used up)',
    });
  });

  it('under onUncertain: fail the part is not resent, and its reason names that policy', async () => {
    const { sim, port } = await simulator({ dropAfterSubmits: 1 });
    const pool = started(makePool({ port, onUncertain: 'fail', maxAttempts: 3 }, clock));
    const outcome = await pool.submit('sim', [part('4915112345678')]);
    expect(outcome.parts).toEqual([{ kind: 'uncertain', cause: 'connection_lost', attempts: 1, why: 'policy' }]);
    expect(sim.recordedSubmits()).toHaveLength(1);
    expect(partResult(1, 0, outcome.parts[0], 1_000)).toMatchObject({
      kind: 'final', status: 'FAILED', reason: 'uncertain: the link dropped before the submit_sm_resp (onUncertain: fail)',
    });
  });

  it('under onUncertain: resend, a part left uncertain by a stop goes back to the queue for the next start, as after a crash', async () => {
    const { sim, port } = await simulator({ responseDelayMs: 60_000 });
    const pool = makePool({ port, onUncertain: 'resend', maxAttempts: 3 }, clock);
    pool.start();
    const pending = pool.submit('sim', [part('4915112345678')]);
    await until(() => sim.recordedSubmits().length === 1, 5_000, 'the submit_sm at the SMSC');
    await pool.stop(50);
    const outcome = await pending;
    expect(outcome.parts).toEqual([{ kind: 'uncertain', cause: 'connection_lost', attempts: 1, why: 'stopped' }]);
    expect(partResult(1, 0, outcome.parts[0], 1_000)).toEqual({ part: 1, kind: 'requeue', notBefore: 1_000 });
  });

  it('a part that used up its attempts is FAILED for that, not requeued, when the pool stops while it waits for a late answer', async () => {
    const { sim, port } = await simulator({ responseDelayMs: 60_000 });
    const { counts, metrics } = recordingMetrics();
    // A long timeout, so that the stop comes well within the grace for a late answer to the last attempt.
    const pool = makePool({ port, onUncertain: 'resend', maxAttempts: 2, responseTimeoutMs: 1_000 }, clock, { metrics });
    pool.start();
    const pending = pool.submit('sim', [part('4915112345678')]);
    await until(() => counts.uncertain === 2, 10_000, 'the second attempt timed out');
    await pool.stop(50);
    const outcome = await pending;
    expect(outcome.parts).toEqual([{ kind: 'uncertain', cause: 'timeout', attempts: 2, why: 'attempts' }]);
    expect(sim.recordedSubmits()).toHaveLength(2);
    expect(partResult(1, 0, outcome.parts[0], 1_000)).toMatchObject({ kind: 'final', status: 'FAILED', attempts: 2 });
  });

  it('a part whose last attempt a stop cut short is FAILED for lack of attempts, not requeued to be sent once more', async () => {
    const { sim, port } = await simulator({ responseDelayMs: 60_000 });
    const pool = makePool({ port, onUncertain: 'resend', maxAttempts: 1 }, clock);
    pool.start();
    const pending = pool.submit('sim', [part('4915112345678')]);
    await until(() => sim.recordedSubmits().length === 1, 5_000, 'the submit_sm at the SMSC');
    await pool.stop(50);
    const outcome = await pending;
    expect(outcome.parts).toEqual([{ kind: 'uncertain', cause: 'connection_lost', attempts: 1, why: 'attempts' }]);
    expect(partResult(1, 0, outcome.parts[0], 1_000)).toMatchObject({ kind: 'final', status: 'FAILED', attempts: 1 });
  });
});
