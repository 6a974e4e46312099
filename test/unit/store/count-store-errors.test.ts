import { afterEach, describe, expect, it } from 'vitest';
import { isSmppdError } from '../../../src/core/errors.js';
import { countStoreErrors } from '../../../src/store/count-store-errors.js';
import { newMessage, storeFolder, type StoreFolder } from '../../support/sqlite-store.js';

let folder: StoreFolder;
afterEach(async () => folder.cleanup());

describe('countStoreErrors', () => {
  it('passes calls and getters through, counts each failed call by its method, and not the refusals that are answers', async () => {
    folder = storeFolder();
    const failed: string[] = [];
    const store = countStoreErrors(await folder.open(), (operation) => failed.push(operation));
    await store.accept({ messages: [newMessage('a')], now: 1 });
    expect((await store.getMessage('a'))?.status).toBe('SUBMITTED');
    expect(store.stats.commits).toBeGreaterThan(0);
    // An answer, not a failure of the store.
    const refused = await store.accept({ messages: [newMessage('b')], batchId: 4242, now: 1 }).catch((e: unknown) => e);
    expect(isSmppdError(refused, 'BATCH_NOT_FOUND')).toBe(true);
    expect(failed).toEqual([]);
    await store.close();
    const closed = await store.getMessage('a').catch((e: unknown) => e);
    expect(isSmppdError(closed, 'INTERNAL')).toBe(true);
    await expect(store.accept({ messages: [newMessage('c')], now: 2 })).rejects.toThrow();
    expect(failed).toEqual(['getMessage', 'accept']);
  });
});
