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

  describe('with keys', () => {
    interface Item { id: string; keys: string[] }
    const item = (id: string, ...keys: string[]): Item => ({ id, keys });
    function keyedRuns(concurrency: number, maxBatch = 10) {
      const runs: Array<{ ids: string[]; finish: () => void }> = [];
      const b = new WriteBatcher<Item, string>({
        concurrency, maxBatch, keysOf: (i) => i.keys,
        runBatch: (items) => new Promise<string[]>((resolve) => { runs.push({ ids: items.map((i) => i.id), finish: () => resolve(items.map((i) => i.id)) }); }),
      });
      return { b, runs, ids: () => runs.map((r) => r.ids) };
    }

    it('a write whose key a running transaction holds waits for it, and so do later writes of that key; the others go ahead', async () => {
      const { b, runs, ids } = keyedRuns(2);
      const done = [item('a', 'k1'), item('b', 'k1'), item('c', 'k2'), item('d', 'k1', 'k3'), item('e', 'k3'), item('f', 'k4')].map((i) => b.write(i));
      // a starts alone, b waits for a's k1, c takes the second slot; d, e and f queue.
      expect(ids()).toEqual([['a'], ['c']]);
      expect(b.stats.queued).toBe(4);
      runs[1]!.finish();
      await settle();
      // The free slot passes over b (k1 held by a), d (behind b) and e (behind d's k3), and takes f.
      expect(ids()).toEqual([['a'], ['c'], ['f']]);
      runs[0]!.finish();
      await settle();
      expect(ids()).toEqual([['a'], ['c'], ['f'], ['b', 'd', 'e']]);
      runs[2]!.finish();
      runs[3]!.finish();
      expect(await Promise.all(done)).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    });

    it('while every queued write waits, a new one that shares no key with them starts in the free slot', async () => {
      const { b, runs, ids } = keyedRuns(2);
      void b.write(item('a', 'k1'));
      void b.write(item('b', 'k1'));
      void b.write(item('c', 'k1', 'k2'));
      expect(ids()).toEqual([['a']]);
      void b.write(item('d', 'k2')); // behind c, which waits
      void b.write(item('e'));
      void b.write(item('f', 'k5'));
      expect(ids()).toEqual([['a'], ['e']]);
      runs[1]!.finish();
      await settle();
      expect(ids()).toEqual([['a'], ['e'], ['f']]);
      runs[0]!.finish();
      await settle();
      expect(ids()).toEqual([['a'], ['e'], ['f'], ['b', 'c', 'd']]);
    });

    it('writes of one key in the queue go into one batch, in order, when no transaction holds it', async () => {
      const { b, runs, ids } = keyedRuns(1, 3);
      for (const i of [item('a', 'k0'), item('b', 'k1'), item('c', 'k1'), item('d', 'k2'), item('e', 'k1')]) void b.write(i);
      runs[0]!.finish();
      await settle();
      expect(ids()).toEqual([['a'], ['b', 'c', 'd']]);
      runs[1]!.finish();
      await settle();
      expect(ids()).toEqual([['a'], ['b', 'c', 'd'], ['e']]);
    });
  });

  it('refuses a concurrency or batch size below 1', () => {
    expect(() => new WriteBatcher({ concurrency: 0, maxBatch: 1, runBatch: async () => [] })).toThrow(RangeError);
    expect(() => new WriteBatcher({ concurrency: 1, maxBatch: 0, runBatch: async () => [] })).toThrow(RangeError);
  });
});
