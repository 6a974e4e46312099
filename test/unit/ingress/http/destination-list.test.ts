/**
 * The compact list of a sendbulk file's numbers (`DestinationList`): the digits given back exactly,
 * repeats left out with the first occurrence of each number in its place, the cap held.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DestinationList } from '../../../../src/ingress/http/destination-list.js';

/** A valid destination: 7–15 digits, no leading 0 (`checkNumber`). */
const destination = fc.tuple(fc.integer({ min: 1, max: 9 }), fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 6, maxLength: 14 }))
  .map(([first, rest]) => `${first}${rest}`);

function listOf(numbers: readonly string[], max = 1_000_000): DestinationList {
  const list = new DestinationList(max);
  for (const n of numbers) expect(list.push(n)).toBe(true);
  return list;
}

const sent = (list: DestinationList, distinct: boolean, size = 1_000) => [...list.toSend(distinct).chunks(size)].flat();

describe('DestinationList', () => {
  it('gives back 15-digit numbers and the shortest ones digit for digit', () => {
    const numbers = ['999999999999999', '100000000000000', '1000000', '447700900123', '999999999999998'];
    expect(sent(listOf(numbers), false)).toEqual(numbers);
  });

  it('takes `max` numbers, no more', () => {
    const list = new DestinationList(3);
    expect(['4470000001', '4470000002', '4470000001'].map((n) => list.push(n))).toEqual([true, true, true]);
    expect(list.push('4470000003')).toBe(false);
    expect(list.length).toBe(3);
  });

  it('in chunks of the size asked, the last one shorter', () => {
    const numbers = Array.from({ length: 2_345 }, (_, i) => String(447_700_000_000 + i));
    expect([...listOf(numbers).toSend(true).chunks(1_000)].map((c) => c.length)).toEqual([1_000, 1_000, 345]);
  });

  it('property: without repeats, each number once at its first line; with them, every line; counts add up', () => {
    fc.assert(fc.property(fc.array(destination, { maxLength: 300 }), fc.integer({ min: 0, max: 300 }), fc.integer({ min: 1, max: 50 }), (pool, extra, size) => {
      // Repeats: lines drawn again from the file's own numbers.
      const numbers = [...pool, ...pool.slice(0, extra % (pool.length + 1)).reverse()];
      const list = listOf(numbers);
      const firsts = [...new Set(numbers)];
      const distinct = list.toSend(true);
      expect(distinct.count).toBe(firsts.length);
      expect(distinct.repeats).toBe(numbers.length - firsts.length);
      const chunks = [...distinct.chunks(size)];
      expect(chunks.flat()).toEqual(firsts);
      expect(chunks.every((c, i) => (i < chunks.length - 1 ? c.length === size : c.length > 0 && c.length <= size))).toBe(true);
      expect(list.toSend(false)).toMatchObject({ count: numbers.length, repeats: 0 });
      expect(sent(list, false, size)).toEqual(numbers);
    }), { seed: 0xde57, numRuns: 500 });
  });
});
