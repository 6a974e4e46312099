import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  candidateKeys,
  decimalToHex,
  formatsMatching,
  hexToDecimal,
  IdFormatLearner,
  matchKey,
  normalizeId,
  receiptKey,
  responseKey,
} from '../../../src/sms/message-id.js';

describe('normalizeId', () => {
  it('drops case, leading zeros and surrounding blanks and NULs', () => {
    expect(normalizeId('  00AbC\0')).toBe('abc');
    expect(normalizeId('000')).toBe('0');
    expect(normalizeId('')).toBe('');
    expect(normalizeId(' \0 ')).toBe('');
    expect(normalizeId('uuid-00-A')).toBe('uuid-00-a');
  });
});

describe('hex and decimal of any length', () => {
  it('converts beyond 64 bits', () => {
    const big = 2n ** 130n + 12345n;
    expect(hexToDecimal(big.toString(16).toUpperCase())).toBe(big.toString(10));
    expect(decimalToHex(big.toString(10))).toBe(big.toString(16));
    expect(hexToDecimal('xyz')).toBeNull();
    expect(decimalToHex('6ae')).toBeNull();
  });
});

describe('matchKey', () => {
  it('keys a part by its submit_sm_resp id whatever the format', () => {
    for (const f of ['same', 'hex', 'decimal'] as const) expect(matchKey('006AE', 'response', f)).toBe('6ae');
  });

  it('reads the receipt id in the base the format names', () => {
    expect(receiptKey('6ae', 'same')).toBe('6ae');
    expect(receiptKey('6AE', 'hex')).toBe(responseKey('1710')); // receipt hex, response decimal
    expect(receiptKey('1710', 'decimal')).toBe(responseKey('6ae')); // receipt decimal, response hex
  });

  it('compares an id that is not a number in that base as written', () => {
    expect(receiptKey('msg-42', 'hex')).toBe('msg-42');
    expect(receiptKey('5F3A2B', 'decimal')).toBe('5f3a2b');
  });
});

describe('candidateKeys', () => {
  it('gives one key when the format is known and every distinct reading in auto', () => {
    expect(candidateKeys('1710', 'same')).toEqual(['1710']);
    expect(candidateKeys('1710', 'auto')).toEqual(['1710', '5904', '6ae']);
    expect(candidateKeys('5f3a2b', 'auto')).toEqual(['5f3a2b', '6240811']);
    expect(candidateKeys('7', 'auto')).toEqual(['7']);
  });

  it('gives none for an empty id', () => {
    expect(candidateKeys('', 'auto')).toEqual([]);
    expect(candidateKeys(' ', 'hex')).toEqual([]);
  });
});

describe('IdFormatLearner', () => {
  it('settles after three agreeing observations and then gives one key', () => {
    const learner = new IdFormatLearner();
    expect(learner.format).toBeNull();
    expect(learner.observePair('6AE', '1710')).toBeNull();
    expect(learner.observePair('FF', '255')).toBeNull();
    expect(learner.observePair('1000', '4096')).toBe('decimal');
    expect(learner.candidateKeys('1710')).toEqual(['6ae']);
  });

  it('learns from which candidate key found a part', () => {
    const learner = new IdFormatLearner('auto', 2);
    const known = new Set(['1710', '255']); // submit_sm_resp ids, decimal
    for (const receiptId of ['6AE', 'ff']) {
      const found = learner.candidateKeys(receiptId).filter((k) => known.has(k));
      learner.observeLookup(receiptId, found);
    }
    expect(learner.format).toBe('hex');
  });

  it('takes no evidence from ids that read the same in every base, or from no match', () => {
    const learner = new IdFormatLearner('auto', 1);
    expect(learner.observePair('7', '7')).toBeNull();
    expect(learner.observePair('7', '8')).toBeNull();
    expect(learner.observeLookup('99', [])).toBeNull();
    expect(learner.format).toBeNull();
  });

  it('starts counting again when the readings disagree', () => {
    const learner = new IdFormatLearner('auto', 2);
    learner.observePair('abc', 'ABC'); // same
    learner.observePair('6ae', '1710'); // decimal
    expect(learner.format).toBeNull();
    learner.observePair('ff', '255');
    expect(learner.format).toBe('decimal');
  });

  it('is settled from the start with a configured format', () => {
    expect(new IdFormatLearner('hex').candidateKeys('6AE')).toEqual(['1710']);
  });
});

describe('id keys (properties)', () => {
  const n = fc.bigInt({ min: 0n, max: 2n ** 256n });
  const zeros = fc.integer({ min: 0, max: 5 }).map((k) => '0'.repeat(k));
  const randomCase = (s: string, flips: boolean[]): string => [...s].map((c, i) => (flips[i % Math.max(1, flips.length)] ? c.toUpperCase() : c)).join('');
  const flips = fc.array(fc.boolean(), { minLength: 1, maxLength: 16 });

  it('hex(n) in the receipt and dec(n) in the response have the same key under "hex", and the other way under "decimal"', () => {
    fc.assert(
      fc.property(n, zeros, zeros, flips, (v, z1, z2, f) => {
        const hex = z1 + randomCase(v.toString(16), f);
        const dec = z2 + v.toString(10);
        expect(matchKey(hex, 'receipt', 'hex')).toBe(matchKey(dec, 'response', 'hex'));
        expect(matchKey(dec, 'receipt', 'decimal')).toBe(matchKey(hex, 'response', 'decimal'));
        expect(candidateKeys(hex, 'auto')).toContain(responseKey(dec));
        expect(candidateKeys(dec, 'auto')).toContain(responseKey(hex));
      }),
    );
  });

  it('leading zeros and case never matter', () => {
    const id = fc.string({ unit: fc.constantFrom(...'0123456789abcdefxyz-'), minLength: 1, maxLength: 40 });
    fc.assert(
      fc.property(id, zeros, flips, fc.constantFrom('same', 'hex', 'decimal' as const), (s, z, f, format) => {
        expect(receiptKey(z + randomCase(s, f), format)).toBe(receiptKey(s, format));
        expect(responseKey(z + randomCase(s, f))).toBe(responseKey(s));
        expect(formatsMatching(z + randomCase(s, f), s)).toContain('same');
      }),
    );
  });
});
