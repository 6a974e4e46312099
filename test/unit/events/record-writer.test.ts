/**
 * The records writer on a real SQLite store (records on) and a real file: one line per message
 * that became final, written after its commit, dropped from the queue only once written; a write
 * that fails leaves the records queued and is tried again; a drop that fails writes nothing twice.
 */
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SystemClock } from '../../../src/core/clock.js';
import { WarningThrottle } from '../../../src/core/warning-throttle.js';
import { RecordFile } from '../../../src/events/record-file.js';
import type { RecordLine } from '../../../src/events/record-line.js';
import { RecordWriter, type RecordMetrics } from '../../../src/events/record-writer.js';
import type { PartResult } from '../../../src/store/claims.js';
import type { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { recordingLog } from '../../support/http.js';
import { newMessage, storeFolder, type StoreFolder } from '../../support/sqlite-store.js';

const clock = new SystemClock();
const accepted = (smscId: string): PartResult => ({ part: 1, kind: 'accepted', smscId, matchKey: smscId.toLowerCase(), bind: 'sim#0', attempts: 1 });
const rejected: PartResult = { part: 1, kind: 'final', status: 'REJECTED', reason: 'ESME_RINVDSTADR (0x0000000B)', attempts: 1 };

let folder: StoreFolder;
const writers: RecordWriter[] = [];
afterEach(async () => {
  for (const w of writers.splice(0)) await w.stop();
  await folder.cleanup();
});

async function setUp(o: { path?: string; store?: (s: SqliteStore) => SqliteStore } = {}) {
  folder = storeFolder();
  const opened = await folder.open({ records: true });
  const store = o.store ? o.store(opened) : opened;
  const path = o.path ?? join(folder.dir, 'records.jsonl');
  const logLines: string[] = [];
  const counts = { written: 0, failed: 0 };
  const metrics: RecordMetrics = { recordsWritten: (n) => { counts.written += n; }, recordWriteFailed: () => { counts.failed++; } };
  const file = new RecordFile(path);
  const log = recordingLog(logLines);
  const writer = new RecordWriter({ store, file, clock, log, warnings: new WarningThrottle(clock, 0), metrics, pollMs: 10, batch: 3 });
  writers.push(writer);
  return { store: opened, path, writer, logLines, counts };
}

const linesOf = (path: string): RecordLine[] => (existsSync(path) ? readFileSync(path, 'utf8') : '').split('\n').filter((l) => l !== '')
  .map((l) => JSON.parse(l) as RecordLine);

/** Messages accepted and claimed at 1 000 ms past the epoch. */
async function claimed(store: SqliteStore, ids: string[], expiresAt?: number): Promise<void> {
  await store.accept({ messages: ids.map((id) => newMessage(id, expiresAt === undefined ? {} : { expiresAt })), now: 1_000 });
  await store.claim('up1', 1_000, 100);
}

describe('RecordWriter', () => {
  it('writes one line per message that became final, with every field, and drops it from the queue', async () => {
    const { store, path, writer, counts } = await setUp();
    await claimed(store, ['d', 'f', 'r', 's']);
    await store.accept({ messages: [newMessage('x', { expiresAt: 1_500 })], now: 1_000 });
    await store.recordSubmit('d', [accepted('D1')], 2_000);
    await store.recordSubmit('f', [accepted('F1')], 2_000);
    await store.recordSubmit('s', [accepted('S1')], 2_000);
    await store.recordSubmit('r', [rejected], 2_500);
    await store.applyReceipt({ upstream: 'up1', keys: ['d1'], status: 'DELIVERED', reason: null, raw: {}, receivedAt: 3_000 });
    await store.applyReceipt({ upstream: 'up1', keys: ['f1'], status: 'FAILED', reason: 'stat:UNDELIV err:034', raw: {}, receivedAt: 3_000 });
    await store.expire(4_000);
    writer.start();
    await vi.waitFor(() => expect(linesOf(path)).toHaveLength(4));
    const lines = linesOf(path);
    expect(lines.find((l) => l.id === 'd')).toEqual({
      v: 1, id: 'd', client: 'acme', upstream: 'up1', route: null, batchId: null, bind: 'sim#0', sender: 'ACME', destination: '971500000001',
      parts: 1, status: 'DELIVERED', reason: null, smscIds: ['D1'], acceptedAt: '1970-01-01T00:00:01.000Z', sentAt: '1970-01-01T00:00:02.000Z',
      finalAt: '1970-01-01T00:00:03.000Z',
    });
    expect(lines.map((l) => [l.id, l.status, l.reason, l.finalAt])).toEqual([
      ['r', 'REJECTED', 'ESME_RINVDSTADR (0x0000000B)', '1970-01-01T00:00:02.500Z'],
      ['d', 'DELIVERED', null, '1970-01-01T00:00:03.000Z'],
      ['f', 'FAILED', 'stat:UNDELIV err:034', '1970-01-01T00:00:03.000Z'],
      ['x', 'FAILED', 'validity expired before submission', '1970-01-01T00:00:04.000Z'],
    ]);
    expect(lines.find((l) => l.id === 'x')).toMatchObject({ bind: null, smscIds: [null], sentAt: null });
    await vi.waitFor(async () => expect(await store.pendingRecords()).toBe(0));
    expect(counts).toEqual({ written: 4, failed: 0 });
  });

  it('a write that fails leaves the records queued, logs and counts it, and writes them once it can', async () => {
    const root = storeFolder();
    const dir = join(root.dir, 'not-yet');
    try {
      const { store, path, writer, logLines, counts } = await setUp({ path: join(dir, 'records.jsonl') });
      await claimed(store, ['a', 'b']);
      for (const id of ['a', 'b']) await store.recordSubmit(id, [rejected], 2_000);
      writer.start();
      await vi.waitFor(() => expect(counts.failed).toBeGreaterThanOrEqual(2));
      expect(await store.pendingRecords()).toBe(2);
      expect(logLines.some((l) => l.includes('"event":"records_write_failed"') && l.includes('ENOENT'))).toBe(true);
      mkdirSync(dir);
      await vi.waitFor(() => expect(linesOf(path).map((l) => l.id)).toEqual(['a', 'b']));
      await vi.waitFor(async () => expect(await store.pendingRecords()).toBe(0));
      expect(logLines.some((l) => l.includes('"event":"records_write_recovered"'))).toBe(true);
      expect(counts.written).toBe(2);
    } finally {
      await root.cleanup();
    }
  });

  it('a drop that fails is done again before the next take: the batch is not written twice', async () => {
    let failDrops = 2;
    const { store, path, writer } = await setUp({
      store: (s) => Object.assign(Object.create(s) as SqliteStore, {
        takeRecords: s.takeRecords.bind(s), pendingRecords: s.pendingRecords.bind(s),
        dropRecords: (seqs: readonly number[]) => (failDrops-- > 0 ? Promise.reject(new Error('store down')) : s.dropRecords(seqs)),
      }),
    });
    await claimed(store, ['a', 'b']);
    for (const id of ['a', 'b']) await store.recordSubmit(id, [rejected], 2_000);
    writer.start();
    await vi.waitFor(async () => expect(await store.pendingRecords()).toBe(0));
    expect(failDrops).toBeLessThan(0);
    expect(linesOf(path).map((l) => l.id)).toEqual(['a', 'b']);
  });

  it('reopen sends the next batch to a new file at the path: nothing lost, nothing written twice', async () => {
    const { store, path, writer } = await setUp();
    writer.start();
    await claimed(store, ['a', 'b', 'c', 'd', 'e']);
    for (const id of ['a', 'b']) await store.recordSubmit(id, [rejected], 2_000);
    await vi.waitFor(() => expect(linesOf(path)).toHaveLength(2));
    renameSync(path, `${path}.1`);
    for (const id of ['c', 'd']) await store.recordSubmit(id, [rejected], 2_000);
    writer.reopen();
    await store.recordSubmit('e', [rejected], 2_000);
    await vi.waitFor(async () => expect(await store.pendingRecords()).toBe(0));
    const before = linesOf(`${path}.1`).map((l) => l.id);
    const after = linesOf(path).map((l) => l.id);
    // The batch under way at the reopen (if any) went whole to the old file.
    expect([...before, ...after].sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(after).toContain('e');
  });

  it('stop writes what is still queued and closes the file', async () => {
    const { store, path, writer } = await setUp();
    await claimed(store, ['a', 'b', 'c', 'd']);
    for (const id of ['a', 'b', 'c', 'd']) await store.recordSubmit(id, [rejected], 2_000);
    // Never started: stop's last pass alone writes them, a batch of 3 then 1.
    await writer.stop();
    writers.splice(0);
    expect(linesOf(path).map((l) => l.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(await store.pendingRecords()).toBe(0);
  });
});
