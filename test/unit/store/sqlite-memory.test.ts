/**
 * The SQLite store keeps the status rows of messages in flight and the keys of parked receipts
 * in memory (`status-cache.ts`, `parked-keys.ts`). Whatever it keeps, it must answer and write
 * exactly what a store that keeps nothing does: the same random sequences of claims, outcomes,
 * receipts, expiries, batch and schedule changes, recoveries, prunes, bursts of writes sharing
 * one commit, and failing writes (which roll a group commit back, some after they changed a
 * message held in memory) go to all of them, and every answer and every row must be the same.
 * One remembering store has the daemon's memory (it finds messages there: checked); another a
 * tiny one, so it evicts, goes over its parked-key limit and back, and reads back all the time.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { DeliveryStatus } from '../../../src/sms/status.js';
import type { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { PartResult } from '../../../src/store/claims.js';
import { WallClockAt } from '../../support/store-conformance/harness.js';
import { newMessage, storeFolder, type StoreFolder } from '../../support/sqlite-store.js';

type Outcome = 'accept' | 'reject' | 'requeue';

type Command =
  | { kind: 'accept'; partCount: number; inBatch: boolean; expires: boolean; scheduled: boolean }
  | { kind: 'claim'; limit: number }
  /** Each accepted part gets a new SMSC id, or (`reuse`) one given before (an SMSC's ids wrap). */
  | { kind: 'submit'; pick: number; outcomes: Outcome[]; reuse: number | null }
  /** `key`: relative to the next new SMSC id (negative: one given already; else parked until it is given). */
  | { kind: 'receipt'; key: number; status: DeliveryStatus | null }
  | { kind: 'expire' }
  | { kind: 'batch'; state: 'paused' | 'active' | 'aborted' }
  | { kind: 'schedule'; state: 'released' | 'cancelled' | 'due' }
  | { kind: 'recover' }
  | { kind: 'pruneParked' }
  | { kind: 'pruneFinished' }
  /** A claim, an outcome and two receipts in one turn: one group commit, the claim and the outcome first. */
  | { kind: 'burst'; pick: number; key: number }
  /**
   * Writes sharing one commit with one that fails: an outcome that fails after it changed its
   * message's first part (it names an unknown part), or an accept of an id already stored. The
   * commit rolls back and runs again, each write in a savepoint.
   */
  | { kind: 'failing'; pick: number; key: number; how: 'half-way outcome' | 'duplicate accept' }
  /** The oldest movable messages composed again in `partCount` parts (on the same upstream: the claims are all of up1). */
  | { kind: 'move'; limit: number; partCount: number; receipt: boolean };

const key = fc.integer({ min: -4, max: 2 });
const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('accept' as const), partCount: fc.integer({ min: 1, max: 3 }), inBatch: fc.boolean(), expires: fc.boolean(),
      scheduled: fc.boolean(),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('claim' as const), limit: fc.integer({ min: 1, max: 4 }) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('submit' as const), pick: fc.nat(), reuse: fc.option(fc.nat({ max: 5 }), { freq: 6 }),
      outcomes: fc.array(fc.constantFrom<Outcome>('accept', 'accept', 'reject', 'requeue'), { minLength: 1, maxLength: 3 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('receipt' as const), key,
      status: fc.constantFrom<DeliveryStatus | null>('DELIVERED', 'DELIVERED', 'SENT', 'FAILED', 'READ', 'REJECTED', null),
    }),
  },
  fc.constant({ kind: 'expire' as const }),
  fc.record({ kind: fc.constant('batch' as const), state: fc.constantFrom('paused' as const, 'active' as const, 'aborted' as const) }),
  fc.record({ kind: fc.constant('schedule' as const), state: fc.constantFrom('released' as const, 'cancelled' as const, 'due' as const) }),
  fc.constant({ kind: 'recover' as const }),
  fc.constant({ kind: 'pruneParked' as const }),
  fc.constant({ kind: 'pruneFinished' as const }),
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('burst' as const), pick: fc.nat(), key }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('move' as const), limit: fc.integer({ min: 1, max: 3 }), partCount: fc.integer({ min: 1, max: 3 }), receipt: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('failing' as const), pick: fc.nat(), key, how: fc.constantFrom('half-way outcome' as const, 'duplicate accept' as const),
    }),
  },
);

/** The same calls on every store, in the same order and the same turn: the answers, or the errors' codes. */
async function all<T>(stores: SqliteStore[], call: (s: SqliteStore) => Promise<T>): Promise<unknown[]> {
  return Promise.all(stores.map((s) => call(s).then((v) => ({ ok: v }), (e: { code?: string; message?: string }) => ({ error: e.code ?? e.message }))));
}

/** A rejected promise as its error's code, so that one failing write does not reject the rest of a burst's answers. */
const settled = <T>(p: Promise<T>): Promise<T | string> => p.catch((e: { code?: string; message?: string }) => `error: ${e.code ?? e.message}`);

const TABLES = [
  'SELECT id, client, upstream, batch_id, registered_delivery, status, reason, processed, events, created_at, updated_at FROM messages ORDER BY seq',
  `SELECT message_id, part, upstream, held, state, status, smsc_id, match_key, bind, attempts, not_before, reason, updated_at, short_message FROM parts
    ORDER BY message_seq, part`,
  'SELECT message_id, part, key, status, reason, changed, ignored, raw, received_at FROM receipts ORDER BY id',
  'SELECT upstream, keys, status, reason, raw, received_at FROM parked_receipts ORDER BY id',
  'SELECT kind, message_id, state, payload, created_at FROM outbox ORDER BY id',
  'SELECT id, state, total, processed FROM batches ORDER BY id',
  'SELECT id, batch_id, state FROM schedules ORDER BY id',
];

/** What the test knows of the stores' contents, to pick sensible arguments (every store holds the same). */
class Model {
  now = 1_000;
  nextId = 0;
  smscIds = 0;
  batchId: number | null = null;
  scheduleId: number | null = null;
  /** Claimed messages without an outcome yet, with their claimed parts. */
  readonly claimed: Array<{ id: string; parts: number[] }> = [];

  keyAt(offset: number): string {
    return `k${Math.max(0, this.smscIds + offset)}`;
  }

  take(pick: number): { id: string; parts: number[] } | undefined {
    return this.claimed.length === 0 ? undefined : this.claimed.splice(pick % this.claimed.length, 1)[0];
  }

  claimedFrom(answer: unknown): void {
    const got = (answer as { ok?: Array<{ id: string; parts: Array<{ part: number }> }> }).ok ?? [];
    for (const m of got) this.claimed.push({ id: m.id, parts: m.parts.map((p) => p.part) });
  }

  results(parts: number[], outcomes: Outcome[], reuse: number | null): PartResult[] {
    return parts.map((part, i) => {
      const outcome = outcomes[i % outcomes.length]!;
      const k = reuse !== null && reuse < this.smscIds ? `k${reuse}` : `k${this.smscIds++}`;
      if (outcome === 'accept') return { part, kind: 'accepted', smscId: k.toUpperCase(), matchKey: k, bind: 'b1', attempts: 1 };
      if (outcome === 'reject') return { part, kind: 'final', status: 'REJECTED', reason: 'ESME_RINVDSTADR', attempts: 1 };
      return { part, kind: 'requeue', notBefore: this.now + 5 };
    });
  }

  receipt(offset: number, status: DeliveryStatus | null) {
    const k = this.keyAt(offset);
    return { upstream: 'up1', keys: [k, `x${k}`], status, reason: status === 'FAILED' ? 'UNDELIV' : null, raw: { text: `id:${k}` }, receivedAt: this.now };
  }
}

async function run(c: Command, stores: SqliteStore[], m: Model): Promise<unknown[] | undefined> {
  const now = m.now;
  switch (c.kind) {
    case 'accept': {
      const id = `m${m.nextId++}`;
      const message = newMessage(id, { partCount: c.partCount, expiresAt: c.expires ? now + 25 : null });
      const newBatch = c.inBatch && m.batchId === null;
      const batch = newBatch ? { batch: { client: 'acme', senderId: 'ACME', reqType: 'bulk', messageType: 'TEXT', campaignName: null } } : {};
      const schedule = newBatch && c.scheduled ? { schedule: { client: 'acme', runAt: now + 15, repeat: null } } : {};
      const append = c.inBatch && m.batchId !== null ? { batchId: m.batchId } : {};
      // Each store gets its own copy: a store may keep (and change) what it was given.
      const answers = await all(stores, (s) => s.accept({ messages: [structuredClone(message)], now, ...batch, ...schedule, ...append }));
      const first = answers[0] as { ok?: { batchId: number | null; scheduleId: number | null } };
      if (newBatch) {
        m.batchId = first.ok?.batchId ?? null;
        m.scheduleId = first.ok?.scheduleId ?? null;
      }
      return answers;
    }
    case 'claim': {
      const answers = await all(stores, (s) => s.claim('up1', now, c.limit));
      m.claimedFrom(answers[0]);
      return answers;
    }
    case 'submit': {
      const taken = m.take(c.pick);
      if (!taken) return undefined;
      const results = m.results(taken.parts, c.outcomes, c.reuse);
      return all(stores, (s) => s.recordSubmit(taken.id, results, now));
    }
    case 'receipt':
      return all(stores, (s) => s.applyReceipt(m.receipt(c.key, c.status)));
    case 'expire':
      return all(stores, (s) => s.expire(now));
    case 'batch':
      if (m.batchId === null) return undefined;
      return all(stores, (s) => s.setBatchState('acme', m.batchId!, c.state, now));
    case 'schedule':
      if (c.state === 'due') return all(stores, (s) => s.releaseDue(now));
      if (m.scheduleId === null) return undefined;
      return all(stores, (s) => s.setScheduleState('acme', m.scheduleId!, c.state as 'released' | 'cancelled', now));
    case 'recover': {
      const answers = await all(stores, (s) => s.recoverInflight({ up1: now % 20 === 0 ? 'fail' : 'resend' }, now));
      m.claimed.length = 0;
      return answers;
    }
    case 'pruneParked':
      return all(stores, (s) => s.pruneParked([{ upstream: 'up1', before: now - 30, max: 4 }], now - 30));
    case 'pruneFinished':
      return all(stores, (s) => s.pruneFinished(now - 15, 5));
    case 'burst': {
      const taken = m.take(c.pick);
      const results = taken ? m.results(taken.parts, ['accept'], null) : [];
      const answers = await all(stores, (s) => Promise.all([
        s.applyReceipt(m.receipt(c.key, 'DELIVERED')),
        taken ? settled(s.recordSubmit(taken.id, results, now)) : Promise.resolve('no outcome'),
        s.claim('up1', now, 2),
        s.applyReceipt(m.receipt(-1, 'DELIVERED')),
      ]));
      m.claimedFrom({ ok: (answers[0] as { ok?: unknown[] }).ok?.[2] });
      return answers;
    }
    case 'move':
      return all(stores, async (s) => {
        const listed = await s.movable('up1', c.limit, now);
        const moves = listed.map((l) => ({
          id: l.id, from: 'up1', upstream: 'up1', encoding: 'GSM-7' as const, registeredDelivery: c.receipt ? 1 : 0, sourceTon: 5, sourceNpi: 0,
          parts: newMessage(l.id, { partCount: c.partCount, text: 'moved' }).parts,
        }));
        return { listed, moved: await s.move(moves, now) };
      });
    case 'failing': {
      const taken = m.take(c.pick);
      if (c.how === 'half-way outcome' && !taken) return undefined;
      // An outcome with a parked receipt waiting (its key is the next new SMSC id), if a message is claimed.
      const outcome = taken ? m.results(taken.parts, ['accept'], null) : [];
      const id = `dup${m.nextId++}`;
      const failing = c.how === 'duplicate accept'
        ? (s: SqliteStore) => [s.accept({ messages: [newMessage(id)], now }), settled(s.accept({ messages: [newMessage(id)], now }))]
        : (s: SqliteStore) => [settled(s.recordSubmit(taken!.id, [...outcome, { part: 99, kind: 'final', status: 'FAILED', reason: 'x', attempts: 1 }], now))];
      return all(stores, (s) => Promise.all([
        s.applyReceipt(m.receipt(c.key, 'DELIVERED')),
        c.how === 'duplicate accept' && taken ? settled(s.recordSubmit(taken.id, outcome, now)) : Promise.resolve('no outcome'),
        ...failing(s),
        s.applyReceipt(m.receipt(c.key - 1, 'READ')),
      ]));
    }
  }
}

describe('the SQLite store\'s memory of its rows', () => {
  const folders: StoreFolder[] = [];
  afterEach(async () => {
    for (const f of folders.splice(0)) await f.cleanup();
  });

  it('answers and writes exactly as a store that remembers nothing', async () => {
    let defaultHits = 0;
    await fc.assert(fc.asyncProperty(fc.array(command, { minLength: 10, maxLength: 100, size: 'max' }), async (commands) => {
      const clock = new WallClockAt(1_000);
      const forgetting = storeFolder();
      const remembering = storeFolder();
      const tiny = storeFolder();
      folders.push(forgetting, remembering, tiny);
      const stores = [
        await forgetting.open({ clock, memory: { statusCacheSize: 0, parkedKeysLimit: 0 } }),
        await remembering.open({ clock }),
        await tiny.open({ clock, memory: { statusCacheSize: 2, parkedKeysLimit: 2, parkedKeysRecountEvery: 2 } }),
      ];
      const m = new Model();
      for (const c of commands) {
        m.now += 10;
        const answers = await run(c, stores, m);
        if (answers === undefined) continue;
        expect(answers[1], `${JSON.stringify(c)} at ${m.now}, default memory`).toEqual(answers[0]);
        expect(answers[2], `${JSON.stringify(c)} at ${m.now}, tiny memory`).toEqual(answers[0]);
      }
      const [expected, ...others] = [forgetting, remembering, tiny].map((f) => f.inspect());
      for (const sql of TABLES) for (const db of others) expect(db.prepare(sql).all(), sql).toEqual(expected!.prepare(sql).all());
      defaultHits += stores[1]!.statusCache.hits;
      expect(stores[0]!.statusCache.hits).toBe(0);
    }), { numRuns: 60 });
    // The daemon's memory answered: the comparison above was of a store that used it.
    expect(defaultHits).toBeGreaterThan(100);
  }, 180_000);
});
