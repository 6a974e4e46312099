import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MinHeap } from '../../../src/core/min-heap.js';

describe('MinHeap', () => {
  it('property: whatever the pushes and pops, each pop is the least left, and drain gives the rest in order', () => {
    const op = fc.oneof(fc.integer({ min: -50, max: 50 }).map((n) => ({ push: n })), fc.constant({ pop: true as const }));
    fc.assert(fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
      const heap = new MinHeap<number>((a, b) => a < b);
      const model: number[] = [];
      for (const o of ops) {
        if ('push' in o) {
          heap.push(o.push);
          model.push(o.push);
        } else {
          model.sort((a, b) => a - b);
          expect(heap.pop()).toBe(model.shift());
        }
        expect(heap.size).toBe(model.length);
        expect(heap.peek()).toBe(model.length === 0 ? undefined : Math.min(...model));
      }
      expect(heap.drain()).toEqual([...model].sort((a, b) => a - b));
      expect(heap.size).toBe(0);
    }), { seed: 0x4ea9, numRuns: 300 });
  });
});
