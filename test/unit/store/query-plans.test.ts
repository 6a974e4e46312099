import { afterEach, describe, expect, it } from 'vitest';
import { CLAIM_SQL } from '../../../src/store/sqlite/claim.js';
import { CLAIM_EVENTS_SQL } from '../../../src/store/sqlite/event-delivery.js';
import { QUEUE_DEPTH_SQL } from '../../../src/store/sqlite/reads.js';
import { FIND_PART_SQL, PRUNE_CAP_SQL } from '../../../src/store/sqlite/receipts.js';
import { MOVABLE_SQL } from '../../../src/store/sqlite/rerouting.js';
import { searchStatement } from '../../../src/store/rules/message-search.js';
import { newMessage, storeFolder, type StoreFolder } from '../../support/sqlite-store.js';

describe('SqliteStore query plans of the hot path', () => {
  let folder: StoreFolder;
  afterEach(async () => folder.cleanup());

  const plan = (sql: string, params: unknown[]) =>
    (folder.inspect().prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail).join(' | ');

  it('claim finds the clients by a probe of parts_claim each, walks a client\'s range in order (no sort) and touches the claimed messages\' parts by primary key only', async () => {
    folder = storeFolder();
    const store = await folder.open();
    await store.accept({ messages: Array.from({ length: 200 }, (_, i) => newMessage(`m${i}`, { partCount: 2, client: i % 2 ? 'acme' : 'globex' })), now: 1 });

    const clients = plan(CLAIM_SQL.clients, [{ upstream: 'up1' }]);
    expect(clients).toContain('USING COVERING INDEX parts_claim (upstream=?)');
    expect(clients).toContain('USING COVERING INDEX parts_claim (upstream=? AND client>?)');
    expect(clients).not.toContain('TEMP B-TREE');
    const claimable = plan(CLAIM_SQL.claimable, ['up1', 'acme', 10, 10, 100]);
    expect(claimable).toContain('USING INDEX parts_claim (upstream=? AND client=?)');
    expect(claimable).not.toContain('TEMP B-TREE');
    expect(claimable).not.toContain('parts_state');
    for (const sql of [CLAIM_SQL.queuedParts, CLAIM_SQL.markInflight]) {
      const p = plan(sql, sql.startsWith('UPDATE') ? [1, '["m1","m2"]'] : ['["m1","m2"]']);
      expect(p).toMatch(/USING INDEX sqlite_autoindex_parts_1 \(message_id=\?\)/);
      expect(p).not.toContain('parts_state');
    }
  });

  it('the queue depth counts each client\'s queued parts off parts_state, in its order (no sort)', async () => {
    folder = storeFolder();
    await folder.open();
    const p = plan(QUEUE_DEPTH_SQL, []);
    expect(p).toContain('USING COVERING INDEX parts_state (state=?)');
    expect(p).not.toContain('TEMP B-TREE');
  });

  it('a failover lists an upstream\'s queued messages off parts_movable, in its order (no sort), reading their parts by primary key', async () => {
    folder = storeFolder();
    const store = await folder.open();
    await store.accept({ messages: Array.from({ length: 200 }, (_, i) => newMessage(`m${i}`, { partCount: 1 + (i % 2) })), now: 1 });
    // upstream, after, now (the not-before time), now (expiry), limit
    const p = plan(MOVABLE_SQL, ['up1', 0, 10, 10, 50]);
    expect(p).toContain('USING INDEX parts_movable (upstream=? AND message_seq>?)');
    expect(p).toMatch(/USING (COVERING )?INDEX sqlite_autoindex_parts_1 \(message_id=\?\)/);
    expect(p).not.toContain('TEMP B-TREE');
    expect(p).not.toContain('parts_state');
  });

  it('a receipt finds its part through parts_match', async () => {
    folder = storeFolder();
    await folder.open();
    const p = plan(FIND_PART_SQL, ['up1', 'k']);
    expect(p).toContain('USING INDEX parts_match (upstream=? AND match_key=?)');
  });

  it('the parking\'s cap reads one upstream\'s newest receipts off parked_receipts_upstream, without a sort', async () => {
    folder = storeFolder();
    await folder.open();
    const p = plan(PRUNE_CAP_SQL, ['up1', 100]);
    expect(p).toContain('USING COVERING INDEX parked_receipts_upstream (upstream=?)');
    expect(p).not.toContain('TEMP B-TREE');
  });

  it('an event claim walks outbox_due in order: heads only, the events behind them are blocked and not read', async () => {
    folder = storeFolder();
    const store = await folder.open();
    await store.accept({ messages: Array.from({ length: 200 }, (_, i) => newMessage(`m${i}`)), now: 1 });
    const p = plan(CLAIM_EVENTS_SQL, ['acme', 10, 10]);
    expect(p).toContain('USING INDEX outbox_due (client=? AND next_attempt_at<?)');
    expect(p).not.toContain('TEMP B-TREE');
  });
});

describe('SqliteStore query plans of the admin reads', () => {
  let folder: StoreFolder;
  afterEach(async () => folder.cleanup());

  const plan = (sql: string, params: unknown[]) =>
    (folder.inspect().prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail).join(' | ');

  it('a search by destination reads messages_destination newest first (no sort); any other reads a range of seq', async () => {
    folder = storeFolder();
    const store = await folder.open();
    await store.accept({ messages: Array.from({ length: 200 }, (_, i) => newMessage(`m${i}`, { destination: `4477009${String(i % 20).padStart(5, '0')}` })), now: 1 });
    const byNumber = searchStatement({ destination: '447700900001', client: 'acme', limit: 50 }, { high: null, low: null }, () => '?');
    const p = plan(byNumber.sql, byNumber.params);
    expect(p).toContain('USING INDEX messages_destination (destination=?)');
    expect(p).not.toContain('TEMP B-TREE');
    const byClient = searchStatement({ client: 'acme', limit: 50 }, { high: 1_000, low: 0 }, () => '?');
    const q = plan(byClient.sql, byClient.params);
    expect(q).toMatch(/SEARCH m USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)/);
    expect(q).not.toContain('TEMP B-TREE');
  });
});
