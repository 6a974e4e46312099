/**
 * The PostgreSQL store's group commit, without a database: batches form from what queued while
 * the slots were busy, and a failing batch is split so only the failing write is rejected.
 */
import { describe, expect, it } from 'vitest';
import { WriteBatcher } from '../../../src/store/postgres/write-batcher.js';

/** A runBatch whose transactions finish when the test says so. */
function controlledRuns() {
  const runs: Array<{ items: number[]; finish: () => void; fail: (e: Error) => void }> = [];
  const runBatch = (items: readonly number[]) => new Promise<number[]>((resolve, reject) => {
    runs.push({ items: [...items], finish: () => resolve(items.map((i) => i * 10)), fail: reject });
  });
  return { runs, runBatch };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('WriteBatcher', () => {
  it('starts a lone write at once, and batches what queued while the slots were busy, in order', async () => {
    const { runs, runBatch } = controlledRuns();
    const b = new WriteBatcher<number, number>({ runBatch, concurrency: 1, maxBatch: 3 });
    const first = b.write(1);
    expect(runs.map((r) => r.items)).toEqual([[1]]);
    const rest = [2, 3, 4, 5, 6].map((i) => b.write(i));
    expect(runs).toHaveLength(1);
    runs[0]!.finish();
    expect(await first).toBe(10);
    await settle();
    expect(runs.map((r) => r.items)).toEqual([[1], [2, 3, 4]]);
    runs[1]!.finish();
    await settle();
    expect(runs.map((r) => r.items)).toEqual([[1], [2, 3, 4], [5, 6]]);
    runs[2]!.finish();
    expect(await Promise.all(rest)).toEqual([20, 30, 40, 50, 60]);
    expect(b.stats).toEqual({ batches: 2, batchedWrites: 5, splits: 0, queued: 0 });
  });

  it('runs up to `concurrency` transactions side by side', () => {
    const { runs, runBatch } = controlledRuns();
    const b = new WriteBatcher<number, number>({ runBatch, concurrency: 2, maxBatch: 10 });
    for (const i of [1, 2, 3, 4]) void b.write(i);
    expect(runs.map((r) => r.items)).toEqual([[1], [2]]);
    expect(b.stats.queued).toBe(2);
  });

  it('a failing batch runs again one write at a time: only the write that fails alone is rejected', async () => {
    const bad = new Error('no message 3');
    const seen: number[][] = [];
    const b = new WriteBatcher<number, number>({
      concurrency: 1, maxBatch: 10,
      runBatch: async (items) => {
        seen.push([...items]);
        await settle();
        if (items.includes(3)) throw bad;
        return items.map((i) => i * 10);
      },
    });
    const lone = b.write(0);
    const batch = [1, 2, 3, 4].map((i) => b.write(i).then((v) => ({ ok: v }), (e: unknown) => ({ error: e })));
    expect(await lone).toBe(0);
    expect(await Promise.all(batch)).toEqual([{ ok: 10 }, { ok: 20 }, { error: bad }, { ok: 40 }]);
    expect(seen).toEqual([[0], [1, 2, 3, 4], [1], [2], [3], [4]]);
    expect(b.stats.splits).toBe(1);
  });

  it('a lone write that fails is rejected without a second run', async () => {
    let runs = 0;
    const b = new WriteBatcher<number, number>({ concurrency: 1, maxBatch: 10, runBatch: async () => { runs++; throw new Error('down'); } });
    await expect(b.write(1)).rejects.toThrow('down');
    expect(runs).toBe(1);
  });

  it('drained() resolves once every write handed in has settled', async () => {
    const { runs, runBatch } = controlledRuns();
    const b = new WriteBatcher<number, number>({ runBatch, concurrency: 1, maxBatch: 10 });
    await b.drained();
    const writes = [1, 2, 3].map((i) => b.write(i));
    let drained = false;
    const waiting = b.drained().then(() => { drained = true; });
    runs[0]!.finish();
    await settle();
    expect(drained).toBe(false);
    runs[1]!.finish();
    await waiting;
    expect(await Promise.all(writes)).toEqual([10, 20, 30]);
  });

  it('refuses a concurrency or batch size below 1', () => {
    expect(() => new WriteBatcher({ concurrency: 0, maxBatch: 1, runBatch: async () => [] })).toThrow(RangeError);
    expect(() => new WriteBatcher({ concurrency: 1, maxBatch: 0, runBatch: async () => [] })).toThrow(RangeError);
  });
});
