import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UpstreamReceipts } from '../../../src/dispatch/receipts.js';
import { RECEIPT_ID_FORMATS } from '../../../src/config/schema.js';
import { parseReceipt, type Receipt } from '../../../src/sms/receipt.js';

/** Fixed: every run tries the same inputs (fast-check prints the seed and path of a failure to replay it). */
const SEED = 0x22d1;

const tlvs = fc.record(
  {
    receiptedMessageId: fc.string({ unit: 'binary', maxLength: 70 }),
    messageState: fc.integer({ min: -1, max: 300 }),
    networkErrorCode: fc.uint8Array({ maxLength: 6 }).map((a) => Buffer.from(a)),
    messagePayload: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
  },
  { requiredKeys: [] },
);

/** Bytes that look like receipts often enough to reach every branch. */
const words = fc.constantFrom('id:', 'ID:', 'stat:', 'err:', 'text:', 'Text:', 'sub:', 'dlvrd:', 'submit date:', 'done date:', ' ', ':', '0', '26112212', 'DELIVRD', '\0');
const receiptLike = fc.array(fc.oneof(words, fc.string({ maxLength: 6 })), { maxLength: 30 }).map((a) => Buffer.from(a.join(''), 'latin1'));
const bytes = fc.oneof(fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)), receiptLike);
const zone = fc.constantFrom('UTC', '+04:00', '-09:30', 'Asia/Kolkata', 'Europe/London', 'nonsense', '');

function isWellFormed(r: Receipt): boolean {
  const nullableStrings = [r.id, r.stat, r.err, r.sub, r.dlvrd, r.submitDate, r.doneDate, r.text];
  return nullableStrings.every((v) => v === null || typeof v === 'string') && Array.isArray(r.warnings) && typeof r.raw === 'string';
}

describe('parseReceipt on arbitrary input', () => {
  it('never throws and always returns a well-formed receipt', () => {
    fc.assert(
      fc.property(bytes, fc.integer({ min: 0, max: 255 }), fc.option(tlvs, { nil: undefined }), zone, (shortMessage, esmClass, t, timeZone) => {
        const r = parseReceipt({ esmClass, shortMessage, ...(t === undefined ? {} : { tlvs: t }) }, { timeZone });
        expect(isWellFormed(r)).toBe(true);
        expect(r.warnings.some((w) => w.startsWith('unreadable receipt'))).toBe(false);
      }),
      { numRuns: 2000, seed: SEED },
    );
  });

  it('reads back any order of the Appendix B fields, with user text that mimics fields', () => {
    const field = (key: string, value: fc.Arbitrary<string>) => value.map((v) => [key, v] as const);
    const idChars = fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: 1, maxLength: 40 });
    const fields = fc.tuple(
      field('id', idChars),
      field('stat', fc.constantFrom('DELIVRD', 'UNDELIV', 'BUFFRED', 'ENROUTE')),
      field('err', fc.stringMatching(/^[0-9]{1,5}$/)),
      field('sub', fc.constantFrom('001', '000')),
      field('done date', fc.constantFrom('2611221231', '261122123107', '20261122123107')),
    );
    const userText = fc.string({ unit: fc.constantFrom(...'abc :stat:UNDELIV id:9 err:1 '), maxLength: 40 });
    fc.assert(
      fc.property(fc.shuffledSubarray([0, 1, 2, 3, 4], { minLength: 5 }), fields, userText, (order, fs, text) => {
        const written = order.map((i) => `${fs[i]![0]}:${fs[i]![1]}`).join(' ');
        const r = parseReceipt({ esmClass: 0x04, shortMessage: Buffer.from(`${written} text:${text}`, 'latin1') }, { timeZone: 'UTC' });
        expect(r.id).toBe(fs[0][1]);
        expect(r.stat).toBe(fs[1][1]);
        expect(r.err).toBe(fs[2][1]);
        expect(r.sub).toBe(fs[3][1]);
        expect(r.doneDate).toMatch(/^2026-11-22T12:31:(00|07)Z$/);
        expect(r.text).toBe(text);
      }),
      { seed: SEED },
    );
  });
});

/** short_message and TLVs of every row of the receipt tables (the repo's copy and the shared original, where present). */
function fixtureReceipts(): Array<{ text: string; tlvId: string | null; tlvState: number | null }> {
  const files = [new URL('../../fixtures/receipts.tsv', import.meta.url), new URL('../../../../shared/fixtures/receipts.tsv', import.meta.url)];
  const rows = files.flatMap((f) => {
    try {
      return readFileSync(f, 'latin1').split(/\r?\n/).filter((l) => l !== '' && !l.startsWith('#')).slice(1);
    } catch {
      return [];
    }
  });
  return rows.map((line) => {
    const [, text = '', tlvId = '-', tlvState = '-'] = line.split('\t');
    return { text, tlvId: tlvId === '-' ? null : tlvId, tlvState: tlvState === '-' ? null : Number(tlvState) };
  });
}

const FIXTURES = fixtureReceipts();

/** One edit an SMSC's bug or a hostile SMSC could make to a receipt's bytes. */
const mutation = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 12 }) }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 20 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('repeat' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 40 }) }),
  fc.record({
    kind: fc.constant('word' as const), at: fc.nat(),
    word: fc.constantFrom('id:', 'stat:', 'err:', 'done date:', 'submit date:', ' text:', '99999999999999999999', '0x', '\u0000', '\u00ff', ':::', 'id:id:'),
  }),
);
type Mutation = typeof mutation extends fc.Arbitrary<infer M> ? M : never;

function mutate(bytes: Buffer, m: Mutation): Buffer {
  const at = bytes.length === 0 ? 0 : m.at % (bytes.length + 1);
  switch (m.kind) {
    case 'flip': {
      if (bytes.length === 0) return bytes;
      const out = Buffer.from(bytes);
      out[at % bytes.length]! ^= 1 << m.bit;
      return out;
    }
    case 'insert':
      return Buffer.concat([bytes.subarray(0, at), Buffer.from(m.bytes), bytes.subarray(at)]);
    case 'delete':
      return Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + m.length)]);
    case 'truncate':
      return bytes.subarray(0, at);
    case 'repeat':
      return Buffer.concat([bytes.subarray(0, at), bytes.subarray(at, at + m.length), bytes.subarray(at)]);
    case 'word':
      return Buffer.concat([bytes.subarray(0, at), Buffer.from(m.word, 'latin1'), bytes.subarray(at)]);
  }
}

describe('the receipt path on receipts seen from real SMSCs, mutated', () => {
  it('has the fixtures to mutate', () => {
    expect(FIXTURES.length).toBeGreaterThanOrEqual(16);
  });

  it('reading, the status it means and the keys it is matched by never throw, whatever the edits', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...FIXTURES), fc.array(mutation, { minLength: 1, maxLength: 6 }), fc.constantFrom(...RECEIPT_ID_FORMATS), zone,
        fc.option(fc.string({ unit: 'binary', maxLength: 70 }), { nil: undefined }), fc.boolean(),
        (row, edits, receiptIdFormat, smscTimeZone, tlvIdEdit, inPayload) => {
          const bytes = edits.reduce(mutate, Buffer.from(row.text, 'latin1'));
          const tlvId = tlvIdEdit ?? row.tlvId;
          const pdu = {
            esmClass: 0x04,
            shortMessage: inPayload ? Buffer.alloc(0) : bytes,
            tlvs: {
              ...(tlvId === null ? {} : { receiptedMessageId: tlvId }),
              ...(row.tlvState === null ? {} : { messageState: row.tlvState }),
              ...(inPayload ? { messagePayload: bytes } : {}),
            },
          };
          const receipts = new UpstreamReceipts({ receiptIdFormat, smscTimeZone });
          const read = receipts.read(pdu);
          expect(isWellFormed(read.receipt)).toBe(true);
          expect(read.keys.every((k) => typeof k === 'string' && k !== '')).toBe(true);
          // No id, no keys: such a receipt is never parked.
          if (read.receipt.id === null) expect(read.keys).toEqual([]);
          receipts.found(read.receipt.id ?? '', read.keys.slice(0, 1));
        },
      ),
      { numRuns: 3000, seed: SEED },
    );
  });

  it('every prefix of every fixture is read without a throw (an SMSC that cuts the text anywhere)', () => {
    const receipts = new UpstreamReceipts({ receiptIdFormat: 'auto', smscTimeZone: 'Europe/Berlin' });
    for (const row of FIXTURES) {
      const bytes = Buffer.from(row.text, 'latin1');
      for (let end = 0; end <= bytes.length; end++) {
        expect(isWellFormed(receipts.read({ esmClass: 0x04, shortMessage: bytes.subarray(0, end) }).receipt)).toBe(true);
      }
    }
  });
});
