/**
 * A message sent with `storePart` keeps the window slot of each accepted part until that part is
 * stored: an earlier part of a long message until `storePart` settles, the last until the
 * outcome is released. Outstanding plus held never exceed the window, so a crash leaves at most a
 * window of parts per bind sent and not stored. Over real sockets against the simulator.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SystemClock } from '../../src/core/clock.js';
import { silentLog } from '../../src/core/log.js';
import type { AcceptedOutcome, MessageOutcome, StorePart } from '../../src/smpp/part-outcome.js';
import type { Pool } from '../../src/smpp/pool.js';
import { SmscSimulator } from '../../src/simulator/simulator.js';
import { makePool, part, until } from '../support/engine.js';

const clock = new SystemClock();
const running: Array<{ pool?: Pool; sim?: SmscSimulator }> = [];

afterEach(async () => {
  for (const r of running.splice(0).reverse()) {
    await r.pool?.stop(100);
    await r.sim?.stop();
  }
});

async function setUp(o: { binds?: number; window: number }): Promise<{ sim: SmscSimulator; pool: Pool }> {
  const sim = new SmscSimulator({
    host: '127.0.0.1', port: 0, accounts: [{ systemId: 'smppclient1', password: 'password' }], record: true,
    behaviour: { receipts: { enabled: false } },
  }, clock, silentLog);
  const { port } = await sim.start();
  running.push({ sim });
  const pool = makePool({ port, binds: o.binds ?? 1, window: o.window }, clock);
  running.push({ pool });
  pool.start();
  return { sim, pool };
}

/** Stores nothing; a single-part message never calls it. */
const storeNothing: StorePart = () => Promise.resolve();

/** A `storePart` whose stores settle when the test says: what it was handed, and how to settle each. */
function pendingStores(): { calls: Array<{ index: number; outcome: AcceptedOutcome; settle: (ok: boolean) => void }>; storePart: StorePart } {
  const calls: Array<{ index: number; outcome: AcceptedOutcome; settle: (ok: boolean) => void }> = [];
  return {
    calls,
    storePart: (index, outcome) => new Promise((resolve, reject) => {
      calls.push({ index, outcome, settle: (ok) => (ok ? resolve(undefined) : reject(new Error('store down'))) });
    }),
  };
}

const held = (pool: Pool): number => pool.stats().reduce((n, b) => n + b.held, 0);
const submitted = (sim: SmscSimulator): number => sim.recordedSubmits().length;

describe('window slots held until the outcome is stored', () => {
  it('counts a held slot against the window until it is released', async () => {
    const { sim, pool } = await setUp({ window: 2 });
    const outcomes: MessageOutcome[] = [];
    for (const d of ['4915100000001', '4915100000002', '4915100000003']) void pool.submit('sim', [part(d)], 0, storeNothing).then((o) => outcomes.push(o));
    await until(() => outcomes.length === 2, 5_000, 'two answered');
    expect(held(pool)).toBe(2);
    expect(pool.stats()[0]!.outstanding).toBe(0);
    await new Promise((r) => setTimeout(r, 100));
    expect(submitted(sim)).toBe(2); // the third waits for a slot

    outcomes[0]!.release!();
    outcomes[0]!.release!(); // once is enough; twice gives back nothing more
    await until(() => outcomes.length === 3, 5_000, 'the third answered');
    expect(submitted(sim)).toBe(3);
    expect(held(pool)).toBe(2);
    for (const o of outcomes) o.release!();
    expect(held(pool)).toBe(0);
  });

  it('holds nothing for a message sent without storePart', async () => {
    const { sim, pool } = await setUp({ window: 1 });
    const outcomes = await Promise.all(['4915100000001', '4915100000002', '4915100000003'].map((d) => pool.submit('sim', [part(d)])));
    expect(outcomes.every((o) => o.parts[0]!.kind === 'accepted')).toBe(true);
    expect(held(pool)).toBe(0);
    expect(submitted(sim)).toBe(3);
  });

  it('stores each earlier accepted part on its own, keeping its slot until the store settles', async () => {
    const { sim, pool } = await setUp({ window: 1 });
    const stores = pendingStores();
    let outcome: MessageOutcome | undefined;
    void pool.submit('sim', [part('4915100000001', 'one'), part('4915100000001', 'two'), part('4915100000001', 'three')], 0, stores.storePart)
      .then((o) => { outcome = o; });
    await until(() => stores.calls.length === 1, 5_000, 'the first part handed to the store');
    expect(stores.calls[0]).toMatchObject({ index: 0, outcome: { kind: 'accepted', attempts: 1 } });
    expect(held(pool)).toBe(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(submitted(sim)).toBe(1); // the window's one slot is the stored-to-be part's

    stores.calls[0]!.settle(true);
    await until(() => stores.calls.length === 2, 5_000, 'the second part handed to the store');
    expect(stores.calls[1]).toMatchObject({ index: 1, outcome: { kind: 'accepted' } });
    expect(submitted(sim)).toBe(2);
    // A failed store gives the slot back too: the message's outcome records the part again.
    stores.calls[1]!.settle(false);
    await until(() => outcome !== undefined, 5_000, 'the message answered');
    expect(stores.calls).toHaveLength(2); // the last part comes with the outcome
    expect(outcome!.parts.map((p) => p.kind)).toEqual(['accepted', 'accepted', 'accepted']);
    expect(held(pool)).toBe(1);
    outcome!.release!();
    expect(held(pool)).toBe(0);
    expect(submitted(sim)).toBe(3);
  });

  it('holds of messages waiting for their stores never deadlock the window', async () => {
    const { sim, pool } = await setUp({ binds: 2, window: 1 });
    // Two slots in all, three messages of three parts, every store settling a little later:
    // each slot is free again once its part is stored, whatever the other messages wait for.
    const messages = ['4915100000001', '4915100000002', '4915100000003'].map((d) => [part(d, 'one'), part(d, 'two'), part(d, 'three')]);
    const storePart: StorePart = () => new Promise((r) => setTimeout(r, 20));
    const outcomes: MessageOutcome[] = [];
    for (const m of messages) void pool.submit('sim', m, 0, storePart).then((o) => { o.release!(); outcomes.push(o); });
    await until(() => outcomes.length === 3, 10_000, 'every message answered');
    expect(outcomes.every((o) => o.parts.every((p) => p.kind === 'accepted'))).toBe(true);
    await until(() => held(pool) === 0, 5_000, 'every store settled'); // an earlier part's may settle after its message's outcome
    expect(submitted(sim)).toBe(9);
  });

  it('messages holding slots all finish when the links drop mid-message and come back', async () => {
    const { sim, pool } = await setUp({ binds: 2, window: 2 });
    sim.setBehaviour({ responseDelayMs: { min: 10, max: 30 } });
    const messages = Array.from({ length: 8 }, (_, i) => ['one', 'two', 'three'].map((t) => part(`49151000000${i}`, t)));
    const outcomes: MessageOutcome[] = [];
    // Released a little after the answer, as the dispatcher does after its commit.
    const storePart: StorePart = () => new Promise((r) => setTimeout(r, 20));
    for (const m of messages) {
      void pool.submit('sim', m, 0, storePart).then((o) => setTimeout(() => { o.release!(); outcomes.push(o); }, 20));
    }
    await until(() => submitted(sim) >= 5, 5_000, 'messages under way');
    sim.dropConnections();
    await until(() => outcomes.length === messages.length, 20_000, 'every message answered');
    expect(outcomes.every((o) => o.parts.every((p) => p.kind === 'accepted'))).toBe(true);
    await until(() => held(pool) === 0, 5_000, 'every store settled');
  });

  it('stops with slots still held', async () => {
    const { pool } = await setUp({ window: 1 });
    const outcome = await pool.submit('sim', [part('4915100000001')], 0, storeNothing);
    expect(held(pool)).toBe(1);
    await pool.stop(100);
    outcome.release!();
    expect(held(pool)).toBe(0);
  });
});
