import { describe, expect, it } from 'vitest';
import { isSmppdError } from '../../../src/core/errors.js';
import type { IdempotencyKeyRef, NewIdempotencyKey } from '../../../src/store/idempotency.js';
import type { NewBatch } from '../../../src/store/intake.js';
import { newMessage } from '../sqlite-store.js';
import { storePerTest, type StoreFactory } from './harness.js';

const bulk: NewBatch = { client: 'acme', senderId: 'ACME', reqType: 'bulk', messageType: 'TEXT', campaignName: null };
const ref: IdempotencyKeyRef = { scope: 'http', client: 'acme', key: 'order-42' };
const HOUR = 3_600_000;

function keyed(over: Partial<NewIdempotencyKey> = {}): NewIdempotencyKey {
  return { ...ref, fingerprint: 'f1', expiresAt: 1_000 + HOUR, ...over };
}

export function describeIdempotencyKeys(factory: StoreFactory): void {
  describe('idempotency keys', () => {
    const t = storePerTest(factory);

    it('a key recorded with its accept names the message; it is per scope and client, and absent ones are undefined', async () => {
      await t.store.accept({ messages: [newMessage('m1')], idempotencyKey: keyed(), now: 1_000 });
      expect(await t.store.findIdempotencyKey(ref, 2_000)).toEqual({
        fingerprint: 'f1', state: 'done', messageId: 'm1', batchId: null, response: null, owner: 'none', createdAt: 1_000, expiresAt: 1_000 + HOUR,
      });
      expect(await t.store.findIdempotencyKey({ ...ref, key: 'order-43' }, 2_000)).toBeUndefined();
      expect(await t.store.findIdempotencyKey({ ...ref, client: 'globex' }, 2_000)).toBeUndefined();
      expect(await t.store.findIdempotencyKey({ ...ref, scope: 'amqp' }, 2_000)).toBeUndefined();
      // The same key of another client, or on the queue, is another key.
      await t.store.accept({ messages: [newMessage('m2', { client: 'globex' })], idempotencyKey: keyed({ client: 'globex' }), now: 1_000 });
      await t.store.accept({ messages: [newMessage('m3')], idempotencyKey: keyed({ scope: 'amqp' }), now: 1_000 });
      expect((await t.store.findIdempotencyKey({ ...ref, client: 'globex' }, 2_000))?.messageId).toBe('m2');
      expect((await t.store.findIdempotencyKey({ ...ref, scope: 'amqp' }, 2_000))?.messageId).toBe('m3');
    });

    it('an accept whose key is recorded is refused IDEMPOTENCY_KEY_IN_USE and stores nothing; its batch neither', async () => {
      await t.store.accept({ messages: [newMessage('m1')], idempotencyKey: keyed(), now: 1_000 });
      const again = await t.store.accept({ messages: [newMessage('m2')], idempotencyKey: keyed({ fingerprint: 'f2' }), now: 1_500 }).catch((e: unknown) => e);
      expect(isSmppdError(again, 'IDEMPOTENCY_KEY_IN_USE')).toBe(true);
      const scheduled = await t.store.accept({
        messages: [newMessage('m3')], batch: { ...bulk, reqType: 'single' }, schedule: { client: 'acme', runAt: 9_000, repeat: null },
        idempotencyKey: keyed(), now: 1_500,
      }).catch((e: unknown) => e);
      expect(isSmppdError(scheduled, 'IDEMPOTENCY_KEY_IN_USE')).toBe(true);
      expect(await t.store.getMessage('m2')).toBeUndefined();
      expect(await t.store.getMessage('m3')).toBeUndefined();
      expect(await t.store.listBatches('acme')).toEqual([]);
      expect(await t.store.findIdempotencyKey(ref, 2_000)).toMatchObject({ fingerprint: 'f1', messageId: 'm1' });
    });

    it('two accepts of one key at once: one is stored, the other refused; others in the same commit are not held up', async () => {
      const results = await Promise.allSettled([
        t.store.accept({ messages: [newMessage('a')], idempotencyKey: keyed(), now: 1_000 }),
        t.store.accept({ messages: [newMessage('plain')], now: 1_000 }),
        t.store.accept({ messages: [newMessage('b')], idempotencyKey: keyed(), now: 1_000 }),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
      expect(isSmppdError((results[2] as PromiseRejectedResult).reason, 'IDEMPOTENCY_KEY_IN_USE')).toBe(true);
      expect((await t.store.findIdempotencyKey(ref, 2_000))?.messageId).toBe('a');
      expect(await t.store.getMessage('plain')).toBeDefined();
      expect(await t.store.getMessage('b')).toBeUndefined();
    });

    it('an accept that fails records no key', async () => {
      const failed = await t.store.accept({ messages: [newMessage('m1')], batchId: 4242, idempotencyKey: keyed(), now: 1_000 }).catch((e: unknown) => e);
      expect(isSmppdError(failed, 'BATCH_NOT_FOUND')).toBe(true);
      expect(await t.store.findIdempotencyKey(ref, 1_000)).toBeUndefined();
    });

    it('a key is forgotten once expired: not found, and an accept records it anew', async () => {
      await t.store.accept({ messages: [newMessage('m1')], idempotencyKey: keyed({ expiresAt: 5_000 }), now: 1_000 });
      expect((await t.store.findIdempotencyKey(ref, 4_999))?.messageId).toBe('m1');
      expect(await t.store.findIdempotencyKey(ref, 5_000)).toBeUndefined();
      await t.store.accept({ messages: [newMessage('m2')], idempotencyKey: keyed({ fingerprint: 'f2', expiresAt: 9_000 }), now: 5_000 });
      expect(await t.store.findIdempotencyKey(ref, 5_000)).toMatchObject({ fingerprint: 'f2', messageId: 'm2', createdAt: 5_000, expiresAt: 9_000 });
    });

    it('a pending key names its batch and this instance until its response is recorded, once', async () => {
      const { batchId } = await t.store.accept({ messages: [newMessage('a'), newMessage('b')], batch: bulk, idempotencyKey: keyed({ pending: true }), now: 1_000 });
      expect(await t.store.findIdempotencyKey(ref, 1_000)).toMatchObject({ state: 'pending', messageId: null, batchId, response: null, owner: 'this' });
      // Later chunks append without a key.
      await t.store.accept({ messages: [newMessage('c')], batchId: batchId!, now: 1_100 });
      const response = { status: 200, body: JSON.stringify({ status: 'success', bulkSessionId: String(batchId) }) };
      expect(await t.store.finishIdempotencyKey(ref, response, 1_200)).toBe(true);
      expect(await t.store.findIdempotencyKey(ref, 1_300)).toMatchObject({ state: 'done', batchId, response, owner: 'none' });
      expect(await t.store.finishIdempotencyKey(ref, { status: 500, body: '{}' }, 1_300)).toBe(false);
      expect((await t.store.findIdempotencyKey(ref, 1_300))?.response).toEqual(response);
      expect(await t.store.finishIdempotencyKey({ ...ref, key: 'none' }, response, 1_300)).toBe(false);
    });

    it('after a restart, keys are kept and a pending one has no owner', async () => {
      await t.store.accept({ messages: [newMessage('m1')], idempotencyKey: keyed(), now: 1_000 });
      await t.store.accept({ messages: [newMessage('b1')], batch: bulk, idempotencyKey: keyed({ key: 'upload-1', pending: true }), now: 1_000 });
      await t.reopen();
      expect((await t.store.findIdempotencyKey(ref, 2_000))?.messageId).toBe('m1');
      expect(await t.store.findIdempotencyKey({ ...ref, key: 'upload-1' }, 2_000)).toMatchObject({ state: 'pending', owner: 'none' });
      // Its response can still be recorded (by a repeat that takes it over).
      expect(await t.store.finishIdempotencyKey({ ...ref, key: 'upload-1' }, { status: 500, body: '{}' }, 2_000)).toBe(true);
    });

    it('pruneIdempotencyKeys deletes expired keys, oldest first, at most `limit` a call', async () => {
      for (const [i, expiresAt] of [3_000, 2_000, 4_000, 9_000].entries()) {
        await t.store.accept({ messages: [newMessage(`m${i}`)], idempotencyKey: keyed({ key: `k${i}`, expiresAt }), now: 1_000 });
      }
      expect(await t.store.pruneIdempotencyKeys(5_000, 2)).toBe(2);
      const left = async () => (await t.rows<{ key: string }>('SELECT key FROM idempotency_keys ORDER BY key')).map((r) => r.key);
      expect(await left()).toEqual(['k2', 'k3']);
      expect(await t.store.pruneIdempotencyKeys(5_000, 2)).toBe(1);
      expect(await t.store.pruneIdempotencyKeys(5_000, 2)).toBe(0);
      expect(await left()).toEqual(['k3']);
      // Its message is not touched.
      expect(await t.store.getMessage('m1')).toBeDefined();
    });

    it('a claimed accept records its key too (a store that claims on accept)', async () => {
      await t.store.accept({ messages: [newMessage('m1')], idempotencyKey: keyed(), now: 1_000, ...(t.store.claimsOnAccept === true ? { claimed: true } : {}) });
      expect((await t.store.findIdempotencyKey(ref, 1_000))?.messageId).toBe('m1');
      const again = await t.store.accept({ messages: [newMessage('m2')], idempotencyKey: keyed(), now: 1_000, ...(t.store.claimsOnAccept === true ? { claimed: true } : {}) })
        .catch((e: unknown) => e);
      expect(isSmppdError(again, 'IDEMPOTENCY_KEY_IN_USE')).toBe(true);
      expect(await t.store.getMessage('m2')).toBeUndefined();
    });
  });
}
