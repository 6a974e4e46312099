import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { uuidV7 } from '../../../src/core/ids.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('uuidV7', () => {
  it('is a version 7, variant 10 UUID whose first 48 bits are the milliseconds', () => {
    const ms = Date.UTC(2026, 10, 23, 11, 0, 0, 123);
    const id = uuidV7(ms);
    expect(id).toMatch(UUID_V7);
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(ms);
  });

  it('ids of later milliseconds sort after earlier ones, as strings', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 48 - 2 }), fc.integer({ min: 1, max: 1_000_000 }), (a, d) => {
      const b = Math.min(2 ** 48 - 1, a + d);
      expect(uuidV7(a) < uuidV7(b)).toBe(true);
    }));
  });

  it('ids of the same millisecond differ', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => uuidV7(1_700_000_000_000)));
    expect(ids.size).toBe(10_000);
    for (const id of ids) expect(id).toMatch(UUID_V7);
  });
});
