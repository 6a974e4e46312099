import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { isSmppdError, SmppdError } from '../../../src/core/errors.js';
import { IdempotencyGate, type KeyedRequest, type KeyedWork } from '../../../src/dispatch/idempotency.js';
import type { IdempotencyKeyRef, IdempotencyRecord, NewIdempotencyKey } from '../../../src/store/idempotency.js';

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Records as a store keeps them, by key; `reads` counts the look-ups. */
function fakeKeys() {
  const records = new Map<string, IdempotencyRecord>();
  const keys = {
    records,
    reads: 0,
    findIdempotencyKey(ref: IdempotencyKeyRef, now: number): Promise<IdempotencyRecord | undefined> {
      keys.reads++;
      const r = records.get(ref.key);
      return Promise.resolve(r !== undefined && r.expiresAt > now ? r : undefined);
    },
    record(key: NewIdempotencyKey, over: Partial<IdempotencyRecord> = {}): void {
      records.set(key.key, {
        fingerprint: key.fingerprint, state: 'done', messageId: null, batchId: null, response: null, owner: 'none', createdAt: 0, expiresAt: key.expiresAt, ...over,
      });
    },
  };
  return keys;
}

const request: KeyedRequest = { scope: 'http', client: 'acme', key: 'k1', fingerprint: 'f1', keepMs: 3_600_000 };

/** A send: `first` records the key done with a new message id; a replay answers the recorded one. */
function sendWork(keys: ReturnType<typeof fakeKeys>, ids: string[]): KeyedWork<string> {
  return {
    first: async (key) => {
      const id = `m${ids.length + 1}`;
      ids.push(id);
      keys.record(key, { messageId: id });
      return id;
    },
    replay: (r) => `replayed ${r.messageId}`,
  };
}

describe('IdempotencyGate', () => {
  it('runs a request whose key is not recorded, with the key to record; a repeat is answered what was recorded', async () => {
    const clock = new ManualClock();
    const keys = fakeKeys();
    const gate = new IdempotencyGate({ store: keys, clock });
    const given: NewIdempotencyKey[] = [];
    const ids: string[] = [];
    const work = sendWork(keys, ids);
    expect(await gate.run(request, { ...work, first: (key) => { given.push(key); return work.first(key); } })).toBe('m1');
    expect(given).toEqual([{ scope: 'http', client: 'acme', key: 'k1', fingerprint: 'f1', expiresAt: clock.wallNow() + 3_600_000 }]);
    expect(await gate.run(request, work)).toBe('replayed m1');
    expect(ids).toEqual(['m1']);
    expect(gate.running).toBe(0);
  });

  it('another fingerprint with a recorded key is IDEMPOTENCY_KEY_REUSED, and nothing runs', async () => {
    const keys = fakeKeys();
    const gate = new IdempotencyGate({ store: keys, clock: new ManualClock() });
    const ids: string[] = [];
    await gate.run(request, sendWork(keys, ids));
    const refused = await gate.run({ ...request, fingerprint: 'f2' }, sendWork(keys, ids)).catch((e: unknown) => e);
    expect(isSmppdError(refused, 'IDEMPOTENCY_KEY_REUSED')).toBe(true);
    expect(ids).toEqual(['m1']);
  });

  it('repeats in this process wait for the request running with their key, then answer what it recorded; other keys do not wait', async () => {
    const keys = fakeKeys();
    const gate = new IdempotencyGate({ store: keys, clock: new ManualClock() });
    let finish!: () => void;
    const ids: string[] = [];
    const work = sendWork(keys, ids);
    const slow: KeyedWork<string> = { ...work, first: async (key) => { await new Promise<void>((resolve) => { finish = resolve; }); return work.first(key); } };
    const first = gate.run(request, slow);
    const repeats = [gate.run(request, work), gate.run(request, work)];
    const other = await gate.run({ ...request, key: 'k2' }, work);
    await settle();
    expect(other).toBe('m1');
    expect(gate.running).toBe(1); // k1's first; its repeats wait outside it
    finish();
    expect(await first).toBe('m2');
    expect(await Promise.all(repeats)).toEqual(['replayed m2', 'replayed m2']);
    expect(ids).toEqual(['m1', 'm2']);
  });

  it('a request refused before its commit records nothing: its repeat runs anew', async () => {
    const keys = fakeKeys();
    const gate = new IdempotencyGate({ store: keys, clock: new ManualClock() });
    const refused = await gate.run(request, { first: () => Promise.reject(new SmppdError('QUEUE_FULL', 'full')), replay: () => 'x' }).catch((e: unknown) => e);
    expect(isSmppdError(refused, 'QUEUE_FULL')).toBe(true);
    expect(await gate.run(request, sendWork(keys, []))).toBe('m1');
  });

  it('a commit that finds the key recorded meanwhile (another instance) reads it again and answers it', async () => {
    const keys = fakeKeys();
    const gate = new IdempotencyGate({ store: keys, clock: new ManualClock() });
    const answer = await gate.run(request, {
      first: (key) => {
        keys.record(key, { messageId: 'theirs' });
        return Promise.reject(new SmppdError('IDEMPOTENCY_KEY_IN_USE', 'taken'));
      },
      replay: (r) => `replayed ${r.messageId}`,
    });
    expect(answer).toBe('replayed theirs');
  });

  it('a key pending on another running instance is read again every pollMs until done; past maxWaitMs it is IDEMPOTENCY_KEY_IN_USE', async () => {
    const clock = new ManualClock();
    const keys = fakeKeys();
    const gate = new IdempotencyGate({ store: keys, clock, pollMs: 100, maxWaitMs: 1_000 });
    const pending = { ...request, expiresAt: clock.wallNow() + 60_000 };
    keys.record(pending, { state: 'pending', owner: 'other', batchId: 7 });
    const waiting = gate.run(request, { first: () => Promise.reject(new Error('must not run')), replay: (r) => r.response?.body ?? '' });
    await settle();
    expect(keys.reads).toBe(1);
    clock.advance(100);
    await settle();
    expect(keys.reads).toBe(2);
    keys.record(pending, { state: 'done', batchId: 7, response: { status: 200, body: '{"bulkSessionId":"7"}' } });
    clock.advance(100);
    expect(await waiting).toBe('{"bulkSessionId":"7"}');

    keys.record({ ...pending, key: 'k9' }, { state: 'pending', owner: 'other' });
    const tooLong = gate.run({ ...request, key: 'k9' }, { first: () => Promise.reject(new Error('must not run')), replay: () => '' }).catch((e: unknown) => e);
    for (let i = 0; i < 12; i++) {
      await settle();
      clock.advance(100);
    }
    const refused = await tooLong;
    expect(isSmppdError(refused, 'IDEMPOTENCY_KEY_IN_USE')).toBe(true);
    expect((refused as SmppdError).details).toEqual({ retryAfterSeconds: 5 });
  });

  it('a pending key nobody runs is handed to `orphaned`; without one, that is INTERNAL', async () => {
    const keys = fakeKeys();
    const gate = new IdempotencyGate({ store: keys, clock: new ManualClock() });
    keys.record({ ...request, expiresAt: Number.MAX_SAFE_INTEGER }, { state: 'pending', owner: 'none', batchId: 3 });
    const seen: IdempotencyRecord[] = [];
    expect(await gate.run(request, { first: () => Promise.reject(new Error('no')), replay: () => 'no', orphaned: async (r) => { seen.push(r); return 'taken over'; } }))
      .toBe('taken over');
    expect(seen.map((r) => r.batchId)).toEqual([3]);
    const internal = await gate.run(request, { first: () => Promise.reject(new Error('no')), replay: () => 'no' }).catch((e: unknown) => e);
    expect(isSmppdError(internal, 'INTERNAL')).toBe(true);
  });
});
