/**
 * Idempotency keys on a PostgreSQL store shared by two instances: who owns a pending key (a
 * sendbulk upload under way), as another instance sees it, and the race of one key on both.
 */
import { expect, it } from 'vitest';
import { isSmppdError } from '../../../src/core/errors.js';
import type { IdempotencyKeyRef } from '../../../src/store/idempotency.js';
import type { NewBatch } from '../../../src/store/intake.js';
import { newMessage } from '../../support/sqlite-store.js';
import { describePg, pgInstancesPerTest } from './pg-store.js';

const bulk: NewBatch = { client: 'acme', senderId: 'ACME', reqType: 'bulk', messageType: 'TEXT', campaignName: null };
const ref: IdempotencyKeyRef = { scope: 'http', client: 'acme', key: 'upload-7' };

describePg('idempotency keys across instances', () => {
  const t = pgInstancesPerTest();

  it('a pending key is "this" instance\'s to its owner, "other" to the rest while the owner runs, and nobody\'s once it is gone', async () => {
    await t.a.accept({ messages: [newMessage('a1')], batch: bulk, idempotencyKey: { ...ref, fingerprint: 'f', expiresAt: 10_000, pending: true }, now: 1_000 });
    expect((await t.a.findIdempotencyKey(ref, 2_000))?.owner).toBe('this');
    expect((await t.b.findIdempotencyKey(ref, 2_000))?.owner).toBe('other');
    await t.a.close();
    expect((await t.b.findIdempotencyKey(ref, 2_000))?.owner).toBe('none');
  });

  it('a restart of the owner under the same instance id leaves its pending keys to nobody', async () => {
    await t.a.accept({ messages: [newMessage('a1')], batch: bulk, idempotencyKey: { ...ref, fingerprint: 'f', expiresAt: 10_000, pending: true }, now: 1_000 });
    await t.a.close();
    const again = await t.schema.open({ instanceId: 'host-a' });
    expect((await again.findIdempotencyKey(ref, 2_000))?.owner).toBe('none');
    expect((await t.b.findIdempotencyKey(ref, 2_000))?.owner).toBe('none');
  });

  it('one key accepted on both instances at once: one message is stored, the other accept is refused', async () => {
    const key = { ...ref, key: 'send-1', fingerprint: 'f', expiresAt: 10_000 };
    for (let round = 0; round < 10; round++) {
      const k = { ...key, key: `send-${round}` };
      const results = await Promise.allSettled([
        t.a.accept({ messages: [newMessage(`a${round}`)], idempotencyKey: k, now: 1_000 }),
        t.b.accept({ messages: [newMessage(`b${round}`)], idempotencyKey: k, now: 1_000 }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(isSmppdError(refused.reason, 'IDEMPOTENCY_KEY_IN_USE')).toBe(true);
      const stored = await t.schema.sql<{ n: number }>('SELECT COUNT(*)::int AS n FROM messages WHERE id IN ($1, $2)', [`a${round}`, `b${round}`]);
      expect(stored[0]?.n).toBe(1);
      expect((await t.b.findIdempotencyKey(k, 1_000))?.messageId).toBe(results[0]!.status === 'fulfilled' ? `a${round}` : `b${round}`);
    }
  });
});
