import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseReceipt } from '../../../src/sms/receipt.js';
import { statusFromReceipt } from '../../../src/sms/status.js';

/** The repo's copy, which these tests run on, and the shared original beside the repo. */
const LOCAL = fileURLToPath(new URL('../../fixtures/receipts.tsv', import.meta.url));
const SHARED = fileURLToPath(new URL('../../../../shared/fixtures/receipts.tsv', import.meta.url));

interface FixtureRow {
  name: string;
  short_message: string;
  tlv_id: string;
  tlv_state: string;
  expect_id: string;
  expect_stat: string;
  expect_status: string;
  expect_err: string;
  expect_done: string;
}

const COLUMNS = ['name', 'short_message', 'tlv_id', 'tlv_state', 'expect_id', 'expect_stat', 'expect_status', 'expect_err', 'expect_done'] as const;

/** Tab-separated, '#' lines are comments, the first other line is the header. */
function readFixture(path: string): FixtureRow[] {
  const lines = readFileSync(path, 'utf8').split(/\r?\n/).filter((l) => l !== '' && !l.startsWith('#'));
  const [header, ...rows] = lines;
  expect(header?.split('\t')).toEqual([...COLUMNS]);
  return rows.map((line) => {
    const cells = line.split('\t');
    expect(cells, line).toHaveLength(COLUMNS.length);
    return Object.fromEntries(COLUMNS.map((c, i) => [c, cells[i] ?? ''])) as unknown as FixtureRow;
  });
}

const orNull = (cell: string): string | null => (cell === '-' ? null : cell);

function checkRow(row: FixtureRow): void {
  const tlvs = {
    ...(row.tlv_id === '-' ? {} : { receiptedMessageId: row.tlv_id }),
    ...(row.tlv_state === '-' ? {} : { messageState: Number(row.tlv_state) }),
  };
  const r = parseReceipt({ esmClass: 0x04, shortMessage: Buffer.from(row.short_message, 'latin1'), tlvs }, { timeZone: 'UTC' });
  expect(r.id).toBe(orNull(row.expect_id));
  expect(r.stat).toBe(orNull(row.expect_stat));
  expect(statusFromReceipt(r.stat, r.err).status).toBe(orNull(row.expect_status));
  expect(r.err).toBe(orNull(row.expect_err));
  expect(r.doneDate).toBe(orNull(row.expect_done));
  expect(r.raw).toBe(row.short_message);
}

describe('receipt fixtures (test/fixtures/receipts.tsv)', () => {
  const rows = readFixture(LOCAL);

  it('has every variant of the shared table', () => {
    expect(rows.length).toBeGreaterThanOrEqual(16);
  });

  it.each(rows.map((r) => [r.name, r] as const))('reads "%s"', (_name, row) => {
    checkRow(row);
  });

  it('reads only the receipt fields before text:, so a stat: in the user text is ignored', () => {
    const row = rows.find((r) => r.name === 'stat inside user text');
    expect(row).toBeDefined();
    const r = parseReceipt({ esmClass: 0x04, shortMessage: Buffer.from(row!.short_message, 'latin1') }, { timeZone: 'UTC' });
    expect(r.text).toBe('stat:UNDELIV err:999');
    expect(r.warnings).toEqual([]);
  });
});

const sharedPresent = existsSync(SHARED);
const skipNote = sharedPresent ? '' : ` (skipped: ${SHARED} not found)`;

describe('shared receipt fixtures', () => {
  it.skipIf(!sharedPresent)(`the repo copy matches the shared table${skipNote}`, () => {
    expect(readFileSync(LOCAL, 'utf8')).toBe(readFileSync(SHARED, 'utf8'));
  });

  it.skipIf(!sharedPresent)(`reads every row of the shared table${skipNote}`, () => {
    for (const row of readFixture(SHARED)) checkRow(row);
  });
});
