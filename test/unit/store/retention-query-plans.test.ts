import { afterEach, describe, expect, it } from 'vitest';
import { PRUNE_SQL } from '../../../src/store/sqlite/retention.js';
import type { PruneCounts, PruneCursor } from '../../../src/store/retention.js';
import { newMessage, storeFolder, type StoreFolder } from '../../support/sqlite-store.js';

const WINDOW_PARAMS = { at: 1, id: 1, before: 2, limit: 3 };

describe('SqliteStore retention sweep: query plans and bounded calls', () => {
  let folder: StoreFolder;
  afterEach(async () => folder.cleanup());

  const plan = (sql: string, params: unknown) =>
    (folder.inspect().prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as Array<{ detail: string }>).map((r) => r.detail).join(' | ');

  it('each window seeks its time index: the rest of the cursor\'s millisecond by rowid, then a time range; no sort, no scan', async () => {
    folder = storeFolder();
    await folder.open();
    const index = { messages: 'messages_created', batches: 'batches_created', inbound: 'inbound_received' } as const;
    const time = { messages: 'created_at', batches: 'created_at', inbound: 'received_at' } as const;
    for (const table of ['messages', 'batches', 'inbound'] as const) {
      const tie = plan(PRUNE_SQL[table].tie, WINDOW_PARAMS);
      const later = plan(PRUNE_SQL[table].later, WINDOW_PARAMS);
      expect(tie, table).toContain(`INDEX ${index[table]} (${time[table]}=? AND rowid>?)`);
      expect(later, table).toContain(`INDEX ${index[table]} (${time[table]}>? AND ${time[table]}<?)`);
      for (const p of [tie, later]) {
        expect(p, table).not.toContain('TEMP B-TREE');
        expect(p, table).not.toMatch(/\bSCAN\b/);
      }
    }
  });

  it('what keeps a row is probed by index, row by row of the window', async () => {
    folder = storeFolder();
    await folder.open();
    const messages = plan(PRUNE_SQL.messages.later, WINDOW_PARAMS);
    expect(messages).toContain('SEARCH p USING INDEX sqlite_autoindex_parts_1 (message_id=?)');
    expect(messages).toContain('USING INDEX outbox_live (message_id=?)');
    expect(messages).toContain('USING COVERING INDEX outbox_message_dead (message_id=?)');
    const batches = plan(PRUNE_SQL.batches.later, WINDOW_PARAMS);
    expect(batches).toContain('USING COVERING INDEX messages_batch (batch_id=?)');
    expect(batches).toContain('USING INDEX sqlite_autoindex_schedules_1 (batch_id=?)');
    expect(plan(PRUNE_SQL.inbound.later, WINDOW_PARAMS)).toContain('USING COVERING INDEX outbox_inbound (inbound_id=?)');
  });

  it('the deletes, and the foreign-key checks they make, go by key: only the list of ids is scanned', async () => {
    folder = storeFolder();
    await folder.open();
    for (const table of ['messages', 'batches', 'inbound'] as const) {
      for (const sql of PRUNE_SQL[table].deletes) {
        const p = plan(sql, '[1, 2]');
        expect(p.replaceAll('SCAN json_each', ''), sql).not.toMatch(/\bSCAN\b/);
      }
    }
    const deleteMessages = PRUNE_SQL.messages.deletes.at(-1);
    expect(plan(deleteMessages!, '[1]')).toMatch(/receipts_part \(message_id=\?\).*sqlite_autoindex_parts_1 \(message_id=\?\)/);
  });

  it('rows it keeps are passed once per sweep: each call looks at `limit` rows and goes on after them', async () => {
    folder = storeFolder();
    const store = await folder.open();
    // 2,500 old messages still queued (kept), then 10 finished ones.
    await store.accept({ messages: Array.from({ length: 2_500 }, (_, i) => newMessage(`q${i}`, { events: false })), now: 1 });
    await store.accept({ messages: Array.from({ length: 10 }, (_, i) => newMessage(`f${i}`, { events: false, upstream: 'up2', registeredDelivery: 0 })), now: 2 });
    await store.claim('up2', 2, 100);
    for (let i = 0; i < 10; i++) {
      await store.recordSubmit(`f${i}`, [{ part: 1, kind: 'accepted', smscId: `F${i}`, matchKey: `f${i}`, bind: 'b1', attempts: 1 }], 3);
    }
    const calls: PruneCounts[] = [];
    let after: PruneCursor | null = null;
    do {
      const c: PruneCounts = await store.pruneFinished(100, 1_000, after);
      calls.push(c);
      after = c.next;
    } while (after !== null);
    expect(calls.map((c) => c.messages)).toEqual([0, 0, 10]);
    expect(calls.map((c) => c.next?.table ?? null)).toEqual(['messages', 'messages', null]);
    expect((await store.counts()).queued).toBe(2_500);
  });
});
