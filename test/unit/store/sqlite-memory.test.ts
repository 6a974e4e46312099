/**
 * The SQLite store keeps the status rows of messages in flight and the keys of parked receipts
 * in memory (`status-cache.ts`, `parked-keys.ts`). Whatever it keeps, it must answer and write
 * exactly what a store that keeps nothing does: the same random sequences of claims, outcomes,
 * receipts, expiries, batch changes, recoveries, prunes and failing writes (which roll a group
 * commit back) go to both, and every answer and every row of the two files must be the same.
 * One remembering store has the daemon's memory (it finds everything there); another has a tiny
 * one, so it evicts, overflows and reads back all the time.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { DeliveryStatus } from '../../../src/sms/status.js';
import type { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { PartResult } from '../../../src/store/store.js';
import { WallClockAt } from '../../support/store-conformance/harness.js';
import { newMessage, storeFolder, type StoreFolder } from '../../support/sqlite-store.js';

type Command =
  | { kind: 'accept'; partCount: number; inBatch: boolean; expires: boolean }
  | { kind: 'claim'; limit: number }
  /** Each accepted part gets a new SMSC id, or (`reuse`) one given before (an SMSC's ids wrap). */
  | { kind: 'submit'; pick: number; outcomes: Array<'accept' | 'reject' | 'requeue'>; reuse: number | null }
  /** `key`: relative to the next new SMSC id (negative: one given already; else parked until it is given). */
  | { kind: 'receipt'; key: number; status: DeliveryStatus | null }
  | { kind: 'expire' }
  | { kind: 'batch'; state: 'paused' | 'active' | 'aborted' }
  | { kind: 'recover' }
  | { kind: 'pruneParked' }
  | { kind: 'pruneFinished' }
  /** Several writes in one group commit, one of which fails: the transaction rolls back and runs again. */
  | { kind: 'failing'; key: number };

const key = fc.integer({ min: -4, max: 2 });
const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('accept' as const), partCount: fc.integer({ min: 1, max: 3 }), inBatch: fc.boolean(), expires: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('claim' as const), limit: fc.integer({ min: 1, max: 4 }) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('submit' as const), pick: fc.nat(), reuse: fc.option(fc.nat({ max: 5 }), { freq: 6 }),
      outcomes: fc.array(fc.constantFrom('accept' as const, 'accept' as const, 'reject' as const, 'requeue' as const), { minLength: 1, maxLength: 3 }),
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
  fc.constant({ kind: 'recover' as const }),
  fc.constant({ kind: 'pruneParked' as const }),
  fc.constant({ kind: 'pruneFinished' as const }),
  fc.record({ kind: fc.constant('failing' as const), key }),
);

/** The same calls on both stores, in the same order and the same turn: the answers, or the errors' codes. */
async function both<T>(stores: SqliteStore[], call: (s: SqliteStore) => Promise<T>): Promise<unknown[]> {
  return Promise.all(stores.map((s) => call(s).then((v) => ({ ok: v }), (e: { code?: string; message?: string }) => ({ error: e.code ?? e.message }))));
}

const TABLES = [
  'SELECT id, client, upstream, batch_id, status, reason, processed, events, created_at, updated_at FROM messages ORDER BY seq',
  'SELECT message_id, part, held, state, status, smsc_id, match_key, bind, attempts, not_before, reason, updated_at FROM parts ORDER BY message_seq, part',
  'SELECT message_id, part, key, status, reason, changed, ignored, raw, received_at FROM receipts ORDER BY id',
  'SELECT upstream, keys, status, reason, raw, received_at FROM parked_receipts ORDER BY id',
  'SELECT kind, message_id, state, payload, created_at FROM outbox ORDER BY id',
  'SELECT id, state, total, processed FROM batches ORDER BY id',
];

describe('the SQLite store\'s memory of its rows', () => {
  const folders: StoreFolder[] = [];
  afterEach(async () => {
    for (const f of folders.splice(0)) await f.cleanup();
  });

  it('answers and writes exactly as a store that remembers nothing', async () => {
    await fc.assert(fc.asyncProperty(fc.array(command, { minLength: 10, maxLength: 80, size: 'max' }), async (commands) => {
      const clock = new WallClockAt(1_000);
      const forgetting = storeFolder();
      const remembering = storeFolder();
      const tiny = storeFolder();
      folders.push(forgetting, remembering, tiny);
      const stores = [
        await forgetting.open({ clock, memory: { statusCacheSize: 0, parkedKeysLimit: 0 } }),
        await remembering.open({ clock }),
        await tiny.open({ clock, memory: { statusCacheSize: 2, parkedKeysLimit: 2 } }),
      ];
      let now = 1_000;
      let nextId = 0;
      let batchId: number | null = null;
      let smscIds = 0;
      const keyAt = (offset: number): string => `k${Math.max(0, smscIds + offset)}`;
      const claimed: Array<{ id: string; parts: number[] }> = [];
      for (const c of commands) {
        now += 10;
        let answers: unknown[];
        switch (c.kind) {
          case 'accept': {
            const id = `m${nextId++}`;
            const message = newMessage(id, { partCount: c.partCount, expiresAt: c.expires ? now + 25 : null });
            const batch = c.inBatch && batchId === null ? { batch: { client: 'acme', senderId: 'ACME', reqType: 'bulk', messageType: 'TEXT', campaignName: null } } : {};
            const append = c.inBatch && batchId !== null ? { batchId } : {};
            // Each store gets its own copy: a store may keep (and change) what it was given.
            answers = await both(stores, (s) => s.accept({ messages: [structuredClone(message)], now, ...batch, ...append }));
            const first = answers[0] as { ok?: { batchId: number | null } };
            if (c.inBatch && batchId === null) batchId = first.ok?.batchId ?? null;
            break;
          }
          case 'claim': {
            answers = await both(stores, (s) => s.claim('up1', now, c.limit));
            const got = (answers[0] as { ok?: Array<{ id: string; parts: Array<{ part: number }> }> }).ok ?? [];
            for (const m of got) claimed.push({ id: m.id, parts: m.parts.map((p) => p.part) });
            break;
          }
          case 'submit': {
            if (claimed.length === 0) continue;
            const [m] = claimed.splice(c.pick % claimed.length, 1);
            const results: PartResult[] = m!.parts.map((part, i) => {
              const outcome = c.outcomes[i % c.outcomes.length]!;
              const key = c.reuse !== null && c.reuse < smscIds ? `k${c.reuse}` : `k${smscIds++}`;
              if (outcome === 'accept') return { part, kind: 'accepted', smscId: key.toUpperCase(), matchKey: key, bind: 'b1', attempts: 1 };
              if (outcome === 'reject') return { part, kind: 'final', status: 'REJECTED', reason: 'ESME_RINVDSTADR', attempts: 1 };
              return { part, kind: 'requeue', notBefore: now + 5 };
            });
            answers = await both(stores, (s) => s.recordSubmit(m!.id, results, now));
            break;
          }
          case 'receipt':
            answers = await both(stores, (s) => s.applyReceipt({
              upstream: 'up1', keys: [keyAt(c.key), `x${keyAt(c.key)}`], status: c.status, reason: c.status === 'FAILED' ? 'UNDELIV' : null,
              raw: { text: `id:${keyAt(c.key)}` }, receivedAt: now,
            }));
            break;
          case 'expire':
            answers = await both(stores, (s) => s.expire(now));
            break;
          case 'batch':
            if (batchId === null) continue;
            answers = await both(stores, (s) => s.setBatchState('acme', batchId!, c.state, now));
            break;
          case 'recover':
            answers = await both(stores, (s) => s.recoverInflight({ up1: now % 20 === 0 ? 'fail' : 'resend' }, now));
            claimed.length = 0;
            break;
          case 'pruneParked':
            answers = await both(stores, (s) => s.pruneParked(now - 30));
            break;
          case 'pruneFinished':
            answers = await both(stores, (s) => s.pruneFinished(now - 15, 5));
            break;
          case 'failing': {
            // The second accept of the same id fails after the first receipt has changed its part:
            // the transaction rolls back and runs again, operation by operation.
            const id = `dup${nextId++}`;
            answers = await both(stores, (s) => Promise.all([
              s.applyReceipt({ upstream: 'up1', keys: [keyAt(c.key)], status: 'DELIVERED', reason: null, raw: {}, receivedAt: now }),
              s.accept({ messages: [newMessage(id)], now }),
              s.accept({ messages: [newMessage(id)], now }).catch((e: { code: string }) => e.code),
              s.applyReceipt({ upstream: 'up1', keys: [keyAt(c.key - 1)], status: 'READ', reason: null, raw: {}, receivedAt: now }),
            ]));
            break;
          }
        }
        expect(answers[1], `${JSON.stringify(c)} at ${now}, default memory`).toEqual(answers[0]);
        expect(answers[2], `${JSON.stringify(c)} at ${now}, tiny memory`).toEqual(answers[0]);
      }
      const [expected, ...others] = [forgetting, remembering, tiny].map((f) => f.inspect());
      for (const sql of TABLES) for (const db of others) expect(db.prepare(sql).all(), sql).toEqual(expected!.prepare(sql).all());
    }), { numRuns: 50 });
  }, 120_000);
});
