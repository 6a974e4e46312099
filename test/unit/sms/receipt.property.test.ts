import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseReceipt, type Receipt } from '../../../src/sms/receipt.js';

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
      { numRuns: 2000 },
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
    );
  });
});
