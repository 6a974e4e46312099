/** Where a page of a message search reads and where the next begins (store/rules/message-search.ts). */
import { describe, expect, it } from 'vitest';
import { pageOf, pageRange, SCAN_WINDOW, searchStatement, type FoundRow } from '../../../src/store/rules/message-search.js';

const row = (seq: number, createdAt = seq): FoundRow => ({
  seq, id: `m${seq}`, client: 'acme', upstream: 'up1', source: 'ACME', destination: '44', status: 'SENT', reason: null, created_at: createdAt, updated_at: createdAt, parts: 1,
});

describe('message search pages', () => {
  it('by destination reads everything below the cursor (its index bounds it); otherwise a window of SCAN_WINDOW below it', () => {
    expect(pageRange({ destination: '44', limit: 10 }, 1_000_000)).toEqual({ high: null, low: null });
    expect(pageRange({ destination: '44', limit: 10, after: 77 }, 1_000_000)).toEqual({ high: 77, low: null });
    expect(pageRange({ limit: 10 }, 1_000_000)).toEqual({ high: 1_000_000, low: 1_000_000 - SCAN_WINDOW });
    expect(pageRange({ client: 'acme', limit: 10, after: 100 }, 1_000_000)).toEqual({ high: 100, low: 0 });
  });

  it('a full page goes on below its last row; a short window goes on below the window until the oldest or since is passed', () => {
    const q = { client: 'acme', limit: 2 };
    const range = { high: 200_000, low: 150_000 };
    expect(pageOf([row(199_999), row(199_990), row(199_900)], q, range, 1, 150_000)).toMatchObject({ next: 199_990 });
    expect(pageOf([row(199_999)], q, range, 1, 150_000)).toMatchObject({ next: 150_000 });
    expect(pageOf([], q, range, 150_000, 150_000)).toMatchObject({ messages: [], next: null });
    expect(pageOf([], { ...q, since: 160_000 }, range, 1, 150_000)).toMatchObject({ next: null });
    expect(pageOf([], { ...q, since: 140_000 }, range, 1, 150_000)).toMatchObject({ next: 150_000 });
    expect(pageOf([row(5)], { destination: '44', limit: 2 }, { high: null, low: null }, 1, null)).toMatchObject({ next: null });
  });

  it('puts every filter in the statement as a parameter, newest first, one row more than the limit', () => {
    const { sql, params } = searchStatement({ destination: '44', client: 'acme', status: 'SENT', since: 1, until: 2, limit: 5 }, { high: 9, low: null }, (n) => `$${n}`);
    expect(sql).toContain('ORDER BY m.seq DESC LIMIT $7');
    expect(params).toEqual(['44', 9, 'acme', 'SENT', 1, 2, 6]);
  });
});
