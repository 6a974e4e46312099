/**
 * A recurring schedule on two PostgresStore instances sharing one schema: both run releaseDue at
 * the same instant, and each run of the series is released once, with one batch made for the next.
 */
import { expect, it } from 'vitest';
import type { Recurrence } from '../../../src/core/recurrence.js';
import {
  COPIED_BATCH_COLUMNS, COPIED_MESSAGE_COLUMNS, COPIED_PART_COLUMNS, NEW_BATCH_COLUMNS, NEW_MESSAGE_COLUMNS, NEW_PART_COLUMNS,
} from '../../../src/store/rules/recurrence.js';
import { until } from '../../support/engine.js';
import { newMessage } from '../../support/sqlite-store.js';
import { describePg, pgInstancesPerTest } from './pg-store.js';

const HOUR = 3_600_000;
const FIRST = Date.UTC(2026, 2, 28, 9);
const SECOND = FIRST + 23 * HOUR;
const daily: Recurrence = { every: 'DAILY', count: null, until: null, zone: 'Europe/London' };

describePg('PostgresStore shared by two instances: recurring schedules', () => {
  const t = pgInstancesPerTest();

  it('two instances releasing the same run at once release it once and make one batch for the next', async () => {
    const { scheduleId, batchId } = await t.a.accept({
      messages: [newMessage('m1'), newMessage('m2')], batch: { client: 'acme', senderId: 'ACME', reqType: 'bulk', messageType: 'TEXT', campaignName: null },
      schedule: { client: 'acme', runAt: FIRST, repeat: 'DAILY', recurrence: daily }, now: 1,
    });
    const gate = `smppd.batch:${t.schema.name}`;
    for (const [at, gateOf] of [[FIRST, batchId!], [SECOND, undefined]] as const) {
      const held = gateOf ?? (await t.a.listSchedules('acme'))[0]!.batchId;
      // Both find the run due, then wait at its batch's gate, held here until both are waiting.
      await t.schema.sql('SELECT pg_advisory_lock(hashtext($1), $2::int)', [gate, held]);
      const racing = Promise.all([t.a.releaseDue(at), t.b.releaseDue(at)]);
      await until(async () => (await t.schema.sql<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"))[0]!.n === 2,
        5_000, 'both instances waiting at the gate');
      await t.schema.sql('SELECT pg_advisory_unlock(hashtext($1), $2::int)', [gate, held]);
      expect((await racing).sort()).toEqual([0, 1]);
    }
    expect((await t.b.listSchedules('acme'))[0]).toMatchObject({ id: scheduleId, state: 'scheduled', runs: 2, runAt: SECOND + 24 * HOUR });
    expect((await t.schema.sql<{ batch_id: number; n: number }>('SELECT batch_id, count(*)::int AS n FROM messages GROUP BY batch_id ORDER BY batch_id'))
      .map((r) => r.n)).toEqual([2, 2, 2]);
  });

  it('a run\'s copy names every column of batches, messages and parts: copied, or written anew', async () => {
    const lists = {
      batches: [...COPIED_BATCH_COLUMNS, ...NEW_BATCH_COLUMNS], messages: [...COPIED_MESSAGE_COLUMNS, ...NEW_MESSAGE_COLUMNS], parts: [...COPIED_PART_COLUMNS, ...NEW_PART_COLUMNS],
    };
    for (const [table, listed] of Object.entries(lists)) {
      const columns = (await t.schema.sql<{ column_name: string }>(
        'SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2', [t.schema.name, table])).map((c) => c.column_name);
      expect(columns.length, table).toBeGreaterThan(0);
      expect(columns.filter((c) => !(listed as string[]).includes(c)), table).toEqual([]);
    }
  });
});
