/**
 * Two PostgresStore instances on one schema, as two smppd processes on two hosts: one queue of
 * parts, one receipt index, one set of batches. Each assertion is on what the shared tables hold.
 */
import { expect, it } from 'vitest';
import type { PartResult } from '../../../src/store/claims.js';
import type { ReceiptRecord } from '../../../src/store/receipts.js';
import type { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { until } from '../../support/engine.js';
import { newMessage } from '../../support/sqlite-store.js';
import { changeEvents, describePg, pgInstancesPerTest } from './pg-store.js';

const LEASE = 60_000;

const accepted = (part: number, smscId: string): PartResult =>
  ({ part, kind: 'accepted', smscId, matchKey: smscId.toLowerCase(), bind: 'b1', attempts: 1 });

const delivered = (key: string, receivedAt = 5_000): ReceiptRecord =>
  ({ upstream: 'up1', keys: [key], status: 'DELIVERED', reason: null, raw: { stat: 'DELIVRD', key }, receivedAt });

const ids = (n: number, prefix = 'm') => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);

describePg('PostgresStore shared by two instances: parts, receipts, batches', () => {
  const t = pgInstancesPerTest({ leaseMs: LEASE });

  it('claims never hand a message to both instances: each is claimed once, with all its parts', async () => {
    const names = ids(600);
    await t.a.accept({ messages: names.map((id, i) => newMessage(id, { partCount: 1 + (i % 3) })), now: 1 });
    const claimedBy = new Map<string, string[]>();
    const claimer = async (store: PostgresStore, who: string) => {
      for (;;) {
        const got = await store.claim('up1', 10, 7);
        for (const m of got) {
          claimedBy.set(m.id, [...(claimedBy.get(m.id) ?? []), who]);
          expect(m.parts.map((p) => p.part)).toEqual(Array.from({ length: 1 + (names.indexOf(m.id) % 3) }, (_, i) => i + 1));
        }
        if (got.length === 0) return;
      }
    };
    await Promise.all([...Array.from({ length: 8 }, () => claimer(t.a, 'a')), ...Array.from({ length: 8 }, () => claimer(t.b, 'b'))]);
    expect(claimedBy.size).toBe(600);
    expect([...claimedBy.values()].filter((who) => who.length !== 1)).toEqual([]);
    expect(await t.a.counts()).toMatchObject({ queued: 0, inflight: 1_200 });
    const byInstance = await t.schema.sql<{ claimed_by: string; n: number }>(
      "SELECT claimed_by, COUNT(DISTINCT message_id) AS n FROM parts GROUP BY claimed_by ORDER BY claimed_by");
    expect(byInstance.map((r) => r.claimed_by)).toEqual(['host-a', 'host-b']);
  });

  it('a live instance\'s claims are never recovered by the other, however old their lease', async () => {
    await t.a.accept({ messages: [newMessage('x'), newMessage('y')], now: 1 });
    await t.a.claim('up1', 10, 10);
    expect(await t.b.recoverInflight({ up1: 'resend' }, 20)).toBe(0);
    expect(await t.b.recoverAbandoned({ up1: 'resend' }, 10 + LEASE * 100)).toBe(0);
    expect(await t.b.counts()).toMatchObject({ inflight: 2, queued: 0 });
  });

  it('renewLeases extends this instance\'s inflight leases that end within half a lease, and no other', async () => {
    await t.a.accept({ messages: [newMessage('x'), newMessage('y'), newMessage('z')], now: 1 });
    await t.a.claim('up1', 10, 1);
    await t.a.claim('up1', 20_000, 1);
    await t.b.claim('up1', 10, 1);
    // At 35,000 the first claim's lease (60,010) ends within half a lease, the second's (80,000) not.
    expect(await t.a.renewLeases(35_000)).toBe(1);
    expect(await t.schema.sql('SELECT message_id, claimed_by, lease_until FROM parts ORDER BY message_id')).toEqual([
      { message_id: 'x', claimed_by: 'host-a', lease_until: 35_000 + LEASE },
      { message_id: 'y', claimed_by: 'host-a', lease_until: 20_000 + LEASE },
      { message_id: 'z', claimed_by: 'host-b', lease_until: 10 + LEASE },
    ]);
    expect(await t.a.renewLeases(35_000)).toBe(0);
  });

  it('a live instance whose lock connection broke keeps its parts: its renewed lease holds, and its renewal takes the lock again', async () => {
    await t.a.accept({ messages: [newMessage('x')], now: 1 });
    await t.a.claim('up1', 10, 1);
    expect(await t.a.renewLeases(40_000)).toBe(1);
    // The lock's session is ended by the server (a database restart, a firewall): the lock is free.
    const ended = await t.schema.sql<{ ok: boolean }>(`SELECT pg_terminate_backend(l.pid) AS ok FROM pg_locks l
      WHERE l.locktype = 'advisory' AND l.objsubid = 2 AND l.objid = hashtext('host-a')::oid AND l.classid = hashtext($1)::oid`, [`smppd.instance:${t.schema.name}`]);
    expect(ended).toEqual([{ ok: true }]);
    // Past the claim's own lease, but not the renewed one: not taken over.
    expect(await t.b.recoverAbandoned({ up1: 'resend' }, 10 + LEASE + 1)).toBe(0);
    await until(async () => (await t.a.renewLeases(50_000)) >= 0 && (await lockHolders()).includes('host-a'), 5_000, 'the lock taken again');
    expect(await t.b.recoverAbandoned({ up1: 'resend' }, 40_000 + LEASE * 100)).toBe(0);
    expect(await t.b.counts()).toMatchObject({ inflight: 1 });
  });

  /** The instance ids whose lock is held now, of those that have claimed parts. */
  async function lockHolders(): Promise<string[]> {
    const rows = await t.schema.sql<{ claimed_by: string }>(`SELECT DISTINCT p.claimed_by FROM parts p JOIN pg_locks l
      ON l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.objid = hashtext(p.claimed_by)::oid AND l.classid = hashtext($1)::oid`,
    [`smppd.instance:${t.schema.name}`]);
    return rows.map((r) => r.claimed_by);
  }

  it('a crashed instance\'s claims return to the other once its lease has ended, by the uncertain policy', async () => {
    await t.a.accept({ messages: [newMessage('x', { partCount: 2 }), newMessage('y', { upstream: 'up2' }), newMessage('z')], now: 1 });
    await t.a.claim('up1', 10, 1);
    await t.a.claim('up2', 10, 1);
    await t.a.close(); // its instance lock goes with its connection, as when the process dies
    expect(await t.b.recoverAbandoned({ up1: 'resend', up2: 'fail' }, 10 + LEASE - 1)).toBe(0);
    expect(await t.b.recoverAbandoned({ up1: 'resend', up2: 'fail' }, 10 + LEASE + 1)).toBe(3);
    expect((await t.b.getMessage('y'))).toMatchObject({ status: 'FAILED', reason: 'uncertain: daemon stopped while the submit_sm was outstanding' });
    expect((await t.b.claim('up1', 10 + LEASE + 2, 10)).map((m) => [m.id, m.parts.length])).toEqual([['x', 2], ['z', 1]]);
    expect(await t.schema.sql("SELECT DISTINCT claimed_by FROM parts WHERE state = 'inflight'")).toEqual([{ claimed_by: 'host-b' }]);
  });

  it('a restart of the same instance recovers its own claims at once, not the other\'s', async () => {
    await t.a.accept({ messages: [newMessage('x'), newMessage('y')], now: 1 });
    await t.a.claim('up1', 10, 1);
    await t.b.claim('up1', 10, 1);
    await t.a.close();
    const again = await t.schema.open({ instanceId: 'host-a', leaseMs: LEASE });
    expect(await again.recoverInflight({ up1: 'resend' }, 20)).toBe(1);
    expect(await t.schema.sql("SELECT message_id, state, claimed_by FROM parts ORDER BY message_id")).toEqual([
      { message_id: 'x', state: 'queued', claimed_by: null }, { message_id: 'y', state: 'inflight', claimed_by: 'host-b' },
    ]);
  });

  it('a claimed accept stores its parts inflight under its instance, as a claim would; no claim returns them', async () => {
    await t.a.accept({ messages: [newMessage('q')], now: 1 });
    // Six at once: the first ones start alone, the rest share transactions, claimed and not mixed.
    const answers = await Promise.all([
      t.a.accept({ messages: [newMessage('v')], now: 2, claimed: true }),
      t.a.accept({ messages: [newMessage('w')], now: 3 }),
      t.a.accept({ messages: [newMessage('x', { partCount: 2 })], now: 5, claimed: true }),
      t.a.accept({ messages: [newMessage('y')], now: 6 }),
      t.a.accept({ messages: [newMessage('z')], now: 7, claimed: true }),
      t.a.accept({ messages: [newMessage('zz')], now: 8 }),
    ]);
    expect(answers.map((a) => a.claimed === true)).toEqual([true, false, true, false, true, false]);
    expect(t.a.stats.accepts.batches).toBeGreaterThan(0);
    expect(await t.schema.sql("SELECT message_id, part, state, claimed_by, lease_until FROM parts ORDER BY message_id, part")).toEqual([
      { message_id: 'q', part: 1, state: 'queued', claimed_by: null, lease_until: null },
      { message_id: 'v', part: 1, state: 'inflight', claimed_by: 'host-a', lease_until: 2 + LEASE },
      { message_id: 'w', part: 1, state: 'queued', claimed_by: null, lease_until: null },
      { message_id: 'x', part: 1, state: 'inflight', claimed_by: 'host-a', lease_until: 5 + LEASE },
      { message_id: 'x', part: 2, state: 'inflight', claimed_by: 'host-a', lease_until: 5 + LEASE },
      { message_id: 'y', part: 1, state: 'queued', claimed_by: null, lease_until: null },
      { message_id: 'z', part: 1, state: 'inflight', claimed_by: 'host-a', lease_until: 7 + LEASE },
      { message_id: 'zz', part: 1, state: 'queued', claimed_by: null, lease_until: null },
    ]);
    // (in the order their transactions gave them seqs: the two slots ran side by side)
    expect((await t.b.claim('up1', 10, 10)).map((m) => m.id).sort()).toEqual(['q', 'w', 'y', 'zz']);
    expect(await t.b.recoverAbandoned({ up1: 'resend' }, 10 + LEASE * 100)).toBe(0);
    await t.a.recordSubmit('x', [accepted(1, 'AA1'), accepted(2, 'AA2')], 20);
    expect(await t.b.applyReceipt(delivered('aa1'))).toMatchObject({ kind: 'matched', messageId: 'x', part: 1 });
    expect((await t.b.getMessage('x'))?.parts.map((p) => p.status)).toEqual(['DELIVERED', 'SENT']);
  });

  it('a claimed accept of a crashed instance returns to the other once its lease has ended', async () => {
    await t.a.accept({ messages: [newMessage('x')], now: 1, claimed: true });
    await t.a.close();
    expect(await t.b.recoverAbandoned({ up1: 'resend' }, 1 + LEASE + 1)).toBe(1);
    expect((await t.b.claim('up1', 1 + LEASE + 2, 10)).map((m) => m.id)).toEqual(['x']);
  });

  it('a claimed accept that fails after its commit went through leaves its parts queued, not inflight under a live instance', async () => {
    await t.a.accept({ messages: [newMessage('x')], now: 1, claimed: true });
    await t.a.accept({ messages: [newMessage('other')], now: 1, claimed: true });
    await t.b.accept({ messages: [newMessage('theirs')], now: 1, claimed: true });
    // The same message again fails (its id is taken), as a commit whose answer was lost would:
    // what the first one committed goes back to the queue; nothing else moves.
    await expect(t.a.accept({ messages: [newMessage('x')], now: 2, claimed: true })).rejects.toThrow();
    expect(await t.schema.sql("SELECT message_id, state, claimed_by FROM parts ORDER BY message_id")).toEqual([
      { message_id: 'other', state: 'inflight', claimed_by: 'host-a' },
      { message_id: 'theirs', state: 'inflight', claimed_by: 'host-b' },
      { message_id: 'x', state: 'queued', claimed_by: null },
    ]);
    expect((await t.b.claim('up1', 10, 10)).map((m) => m.id)).toEqual(['x']);
  });

  it('an instance that lost its lock session and cannot take it back queues a claimed send; with the lock back it claims again', async () => {
    const space = `smppd.instance:${t.schema.name}`;
    await t.a.accept({ messages: [newMessage('before')], now: 1, claimed: true });
    // The lock's session ends (a network blip) and another session holds the lock meanwhile.
    const terminated = await t.schema.sql<{ n: number }>(
      `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_locks
       WHERE locktype = 'advisory' AND objsubid = 2 AND classid = hashtext($1)::oid AND objid = hashtext($2)::oid`, [space, 'host-a']);
    expect(terminated[0]?.n).toBe(1);
    await until(async () => (await t.schema.sql<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1), hashtext($2)) AS ok', [space, 'host-a']))[0]!.ok,
      5_000, 'the lock to be free');
    // Until the store notices its session is gone, a claimed send may still go through as claimed.
    let k = 0;
    let last = { id: '', claimed: true as boolean | undefined };
    await until(async () => {
      const id = `during-${k++}`;
      last = { id, claimed: (await t.a.accept({ messages: [newMessage(id)], now: 2, claimed: true })).claimed };
      return last.claimed !== true;
    }, 5_000, 'a claimed send to be queued');
    expect(await t.schema.sql('SELECT state, claimed_by FROM parts WHERE message_id = $1', [last.id])).toEqual([{ state: 'queued', claimed_by: null }]);
    await t.schema.sql('SELECT pg_advisory_unlock(hashtext($1), hashtext($2))', [space, 'host-a']);
    expect((await t.a.accept({ messages: [newMessage('after')], now: 3, claimed: true })).claimed).toBe(true);
    expect(await t.schema.sql("SELECT state, claimed_by FROM parts WHERE message_id = 'after'")).toEqual([{ state: 'inflight', claimed_by: 'host-a' }]);
  });

  it('claimed is only for a message without a batch or a schedule', async () => {
    const batch = { client: 'acme', senderId: 'ACME', reqType: 'single', messageType: 'TEXT', campaignName: null };
    await expect(t.a.accept({ messages: [newMessage('x')], now: 1, batch, claimed: true })).rejects.toThrow(/claimed accept/);
    expect(await t.a.counts()).toMatchObject({ queued: 0, inflight: 0 });
  });

  it('a late requeue from an instance whose claim was taken over leaves the part to its new holder', async () => {
    await t.a.accept({ messages: [newMessage('x')], now: 1 });
    await t.a.claim('up1', 10, 1);
    // host-a is cut off long enough for host-b to take its part over (simulated by rewriting the claim)
    await t.schema.sql("UPDATE parts SET claimed_by = 'host-b', lease_until = $1", [10 + LEASE]);
    await t.a.recordSubmit('x', [{ part: 1, kind: 'requeue', notBefore: 0 }], 30);
    expect(await t.schema.sql('SELECT state, claimed_by FROM parts')).toEqual([{ state: 'inflight', claimed_by: 'host-b' }]);
    await t.b.recordSubmit('x', [accepted(1, 'X1')], 40);
    expect((await t.a.getMessage('x'))?.status).toBe('SENT');
  });

  it('a receipt that arrives on instance B finds the part submitted through instance A', async () => {
    await t.a.accept({ messages: [newMessage('x')], now: 1_000 });
    await t.a.claim('up1', 1_000, 10);
    await t.a.recordSubmit('x', [accepted(1, 'ABC')], 2_000);
    expect(await t.b.applyReceipt(delivered('abc'))).toEqual({ kind: 'matched', messageId: 'x', part: 1, key: 'abc', changed: true });
    expect((await t.a.getMessage('x'))?.status).toBe('DELIVERED');
  });

  it('a receipt parked on B is matched when A records the submit', async () => {
    await t.a.accept({ messages: [newMessage('x')], now: 1_000 });
    await t.a.claim('up1', 1_000, 10);
    expect(await t.b.applyReceipt(delivered('abc', 1_500))).toEqual({ kind: 'parked' });
    await t.a.recordSubmit('x', [accepted(1, 'ABC')], 2_000);
    expect((await t.b.getMessage('x'))?.status).toBe('DELIVERED');
    expect(await t.a.counts()).toMatchObject({ parked: 0 });
  });

  it('receipts racing their submit outcomes on the other instance are each applied exactly once', async () => {
    const names = ids(150);
    await t.a.accept({ messages: names.map((id) => newMessage(id)), now: 1_000 });
    expect(await t.a.claim('up1', 1_000, 1_000)).toHaveLength(150);
    // For every message at once: A records the submit, B applies its receipt (twice: a duplicate).
    await Promise.all(names.flatMap((id) => [
      t.a.recordSubmit(id, [accepted(1, `S-${id}`)], 2_000),
      t.b.applyReceipt(delivered(`s-${id}`, 1_900)),
      t.b.applyReceipt(delivered(`s-${id}`, 1_901)),
    ]));
    expect(await t.a.counts()).toMatchObject({ parked: 0, inflight: 0 });
    expect(await t.schema.sql("SELECT status, COUNT(*) AS n FROM messages GROUP BY status")).toEqual([{ status: 'DELIVERED', n: 150 }]);
    expect(await t.schema.sql('SELECT changed, COUNT(*) AS n FROM receipts GROUP BY changed ORDER BY changed')).toEqual([{ changed: 0, n: 150 }, { changed: 1, n: 150 }]);
    const events = await changeEvents(t.schema.sql);
    for (const id of names) expect(events.filter((e) => e.messageId === id).map((e) => e.status)).toEqual(['SENT', 'DELIVERED']);
  });

  it('a batch completed by both instances at once counts each message once', async () => {
    const names = ids(200);
    const { batchId } = await t.a.accept({
      messages: names.map((id) => newMessage(id, { partCount: 2 })),
      batch: { client: 'acme', senderId: 'ACME', reqType: 'bulk', messageType: 'TEXT', campaignName: null },
      now: 1,
    });
    const [fromA, fromB] = await Promise.all([t.a.claim('up1', 10, 100), t.b.claim('up1', 10, 100)]);
    expect(fromA!.length + fromB!.length).toBe(200);
    await Promise.all([
      ...fromA!.map((m) => t.a.recordSubmit(m.id, [accepted(1, `${m.id}-1`), accepted(2, `${m.id}-2`)], 20)),
      ...fromB!.map((m) => t.b.recordSubmit(m.id, [accepted(1, `${m.id}-1`), accepted(2, `${m.id}-2`)], 20)),
    ]);
    expect(await t.b.getBatch('acme', batchId!)).toMatchObject({ total: 200, processed: 200, pending: 0 });
    // receipts move no counter a second time
    await Promise.all(names.flatMap((id) => [t.a.applyReceipt(delivered(`${id}-1`)), t.b.applyReceipt(delivered(`${id}-2`))]));
    expect(await t.a.getBatch('acme', batchId!)).toMatchObject({ processed: 200 });
    expect(await t.schema.sql("SELECT status, COUNT(*) AS n FROM messages GROUP BY status")).toEqual([{ status: 'DELIVERED', n: 200 }]);
  });

  for (const paused of [false, true]) {
    it(`an abort${paused ? ' of a paused batch' : ''} on one instance while the other requeues its parts leaves nothing queued`, async () => {
      const names = ids(120);
      const { batchId } = await t.a.accept({
        messages: names.map((id) => newMessage(id)),
        batch: { client: 'acme', senderId: 'ACME', reqType: 'bulk', messageType: 'TEXT', campaignName: null },
        now: 1,
      });
      const claimed = await t.b.claim('up1', 10, 60);
      // Paused, every part not done is held already: the abort changes no part's `held`.
      if (paused) await t.a.setBatchState('acme', batchId!, 'paused', 15);
      await Promise.all([
        t.a.setBatchState('acme', batchId!, 'aborted', 20),
        ...claimed.map((m) => t.b.recordSubmit(m.id, [{ part: 1, kind: 'requeue', notBefore: 0 }], 20)),
      ]);
      expect(await t.a.counts()).toMatchObject({ queued: 0, inflight: 0 });
      expect(await t.schema.sql("SELECT status, reason, COUNT(*) AS n FROM messages GROUP BY status, reason")).toEqual([
        { status: 'FAILED', reason: 'batch aborted', n: 120 },
      ]);
      expect(await t.a.getBatch('acme', batchId!)).toMatchObject({ state: 'aborted', processed: 120, pending: 0 });
    });
  }

  it('releaseDue on both instances at once releases each schedule once', async () => {
    for (let i = 0; i < 10; i++) {
      await t.a.accept({
        messages: [newMessage(`s${i}`)],
        batch: { client: 'acme', senderId: 'ACME', reqType: 'bulk', messageType: 'TEXT', campaignName: null },
        schedule: { client: 'acme', runAt: 100 + i, repeat: null },
        now: 1,
      });
    }
    const released = await Promise.all([t.a.releaseDue(1_000), t.b.releaseDue(1_000), t.a.releaseDue(1_000), t.b.releaseDue(1_000)]);
    expect(released.reduce((x, y) => x + y, 0)).toBe(10);
    expect((await t.a.claim('up1', 1_000, 100)).length).toBe(10);
  });
});
