import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RecordFile } from '../../../src/events/record-file.js';
import { recordLines, toRecordLine } from '../../../src/events/record-line.js';
import type { MessageRecord } from '../../../src/store/message-records.js';

let dir: string;
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'smppd-records-')); });
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

describe('RecordFile', () => {
  it('creates the file, appends whole lines, and continues a file whose last line was cut short on a new line', async () => {
    const path = join(dir, 'records.jsonl');
    const file = new RecordFile(path);
    await file.append('{"a":1}\n');
    expect(statSync(path).mode & 0o777 & ~0o640).toBe(0);
    await file.close();
    writeFileSync(path, '{"a":1}\n{"b":', { flag: 'w' });
    const again = new RecordFile(path);
    await again.append('{"c":3}\n');
    await again.append('{"d":4}\n');
    await again.close();
    expect(readFileSync(path, 'utf8')).toBe('{"a":1}\n{"b":\n{"c":3}\n{"d":4}\n');
  });

  it('a write that fails leaves nothing of its batch in the file, and the batch is written whole later', async () => {
    const path = join(dir, 'records.jsonl');
    const file = new RecordFile(path);
    await file.append('{"a":1}\n');
    // The data reached the file but not the disk: cut back, as after a short write.
    const probe = await open(path, 'r');
    const proto = Object.getPrototypeOf(probe) as { datasync: () => Promise<void> };
    await probe.close();
    vi.spyOn(proto, 'datasync').mockRejectedValueOnce(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }));
    await expect(file.append('{"b":2}\n{"c":3}\n')).rejects.toThrow(/no space/);
    expect(readFileSync(path, 'utf8')).toBe('{"a":1}\n');
    await file.append('{"b":2}\n{"c":3}\n');
    await file.close();
    expect(readFileSync(path, 'utf8')).toBe('{"a":1}\n{"b":2}\n{"c":3}\n');
  });

  it('a closed file refuses appends', async () => {
    const file = new RecordFile(join(dir, 'records.jsonl'));
    await file.close();
    await expect(file.append('{}\n')).rejects.toThrow(/closed/);
  });
});

describe('record lines', () => {
  const base: MessageRecord = {
    seq: 7, messageId: 'm1', status: 'DELIVERED', reason: null, finalAt: Date.UTC(2026, 0, 2, 3, 4, 5, 678),
    message: { client: 'shop', upstream: 'eu', route: 'default', batchId: 12, source: 'Shop', destination: '447700900123', acceptedAt: Date.UTC(2026, 0, 2, 3, 4, 0) },
    parts: [
      { part: 1, smscId: null, bind: null, acceptedAt: null },
      { part: 2, smscId: 'B2', bind: 'eu#1', acceptedAt: Date.UTC(2026, 0, 2, 3, 4, 2) },
      { part: 3, smscId: 'B3', bind: 'eu#0', acceptedAt: Date.UTC(2026, 0, 2, 3, 4, 1) },
    ],
  };

  it('a line is version 1 JSON: the first bind, the SMSC ids by part, sentAt the first acceptance, times in ISO 8601 UTC', () => {
    expect(recordLines([base])).toBe(`${JSON.stringify({
      v: 1, id: 'm1', client: 'shop', upstream: 'eu', route: 'default', batchId: 12, bind: 'eu#1', sender: 'Shop', destination: '447700900123',
      parts: 3, status: 'DELIVERED', reason: null, smscIds: [null, 'B2', 'B3'], acceptedAt: '2026-01-02T03:04:00.000Z',
      sentAt: '2026-01-02T03:04:01.000Z', finalAt: '2026-01-02T03:04:05.678Z',
    })}\n`);
  });

  it('a record whose message is gone keeps what the queue held, the rest null', () => {
    expect(toRecordLine({ ...base, message: null, parts: [] })).toEqual({
      v: 1, id: 'm1', client: null, upstream: null, route: null, batchId: null, bind: null, sender: null, destination: null, parts: null,
      status: 'DELIVERED', reason: null, smscIds: [], acceptedAt: null, sentAt: null, finalAt: '2026-01-02T03:04:05.678Z',
    });
  });
});
