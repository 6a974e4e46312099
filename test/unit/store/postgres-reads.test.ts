/**
 * The PostgreSQL store's counts (`src/store/postgres/reads.ts`): each count statement runs after
 * the settings that make it read its partial indexes by index scan, on the same connection
 * (`test/integration/postgres/query-plans.test.ts` has the plans those settings give).
 */
import { expect, it } from 'vitest';
import type { Queryable } from '../../../src/store/postgres/db.js';
import {
  COUNT_BY_INDEX_SQL, COUNTS_SQL, counts, OUTBOX_DEPTH_SQL, outboxDepth, QUEUE_DEPTH_SQL, queueDepth,
} from '../../../src/store/postgres/reads.js';
import { isPlannedEachRun } from '../../../src/store/postgres/statements.js';

/** A connection that answers nothing and keeps the text of each statement sent. */
class Recorder implements Queryable {
  readonly texts: string[] = [];

  rows<R>(text: string): Promise<R[]> {
    this.texts.push(text);
    return Promise.resolve([]);
  }

  row<R>(text: string): Promise<R | undefined> {
    this.texts.push(text);
    return Promise.resolve(undefined);
  }

  run(text: string): Promise<number> {
    this.texts.push(text);
    return Promise.resolve(0);
  }
}

it('each count runs on its connection after the settings that keep it off bitmaps and table scans, and is planned each run', async () => {
  const reads: Array<[(tx: Queryable) => Promise<unknown>, string]> = [[queueDepth, QUEUE_DEPTH_SQL], [counts, COUNTS_SQL], [outboxDepth, OUTBOX_DEPTH_SQL]];
  for (const [read, sql] of reads) {
    const tx = new Recorder();
    await read(tx);
    expect(tx.texts).toEqual([COUNT_BY_INDEX_SQL, sql]);
    // A plan is kept with no regard to the settings it was made under.
    expect(isPlannedEachRun(sql)).toBe(true);
  }
  expect(COUNT_BY_INDEX_SQL).toMatch(/set_config\('enable_bitmapscan', 'off', true\), set_config\('enable_seqscan', 'off', true\)/);
});
