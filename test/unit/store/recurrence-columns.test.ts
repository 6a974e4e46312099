/**
 * A run's copy (`src/store/rules/recurrence.ts`) names every column of batches, messages and
 * parts: copied from the released run, or written anew. A column a later migration adds fails
 * this test until it is put in one of the lists.
 */
import { afterEach, expect, it } from 'vitest';
import {
  COPIED_BATCH_COLUMNS, COPIED_MESSAGE_COLUMNS, COPIED_PART_COLUMNS, NEW_BATCH_COLUMNS, NEW_MESSAGE_COLUMNS, NEW_PART_COLUMNS,
} from '../../../src/store/rules/recurrence.js';
import { storeFolder, type StoreFolder } from '../../support/sqlite-store.js';

let folder: StoreFolder | undefined;
afterEach(async () => folder?.cleanup());

const LISTS: Record<string, readonly string[]> = {
  batches: [...COPIED_BATCH_COLUMNS, ...NEW_BATCH_COLUMNS],
  messages: [...COPIED_MESSAGE_COLUMNS, ...NEW_MESSAGE_COLUMNS],
  parts: [...COPIED_PART_COLUMNS, ...NEW_PART_COLUMNS],
};

it('every column of batches, messages and parts is copied to the next run or written anew', async () => {
  folder = storeFolder();
  await (await folder.open()).close();
  const db = folder.inspect();
  for (const [table, listed] of Object.entries(LISTS)) {
    const columns = (db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map((c) => c.name);
    expect(columns.filter((c) => !listed.includes(c)), table).toEqual([]);
  }
});
