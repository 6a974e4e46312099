/**
 * The sender ID rule: what each kind is, what is refused and why, and that nothing refused or
 * accepted can hold a character a C-Octet String or a handset would misread.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ALPHANUMERIC_CHARACTERS, checkSenderId } from '../../../src/sms/sender-id.js';

describe('checkSenderId', () => {
  const kinds: Array<[string, string]> = [
    ['MyBrand', 'alphanumeric'], ['A', 'alphanumeric'], ['Shop 24/7', 'alphanumeric'], ['a!"#$%&\'()*', 'alphanumeric'],
    ['+-./:;<=>?@', 'refused'], ['Bank_Alert', 'alphanumeric'], ['ABCDEFGHIJK', 'alphanumeric'],
    ['123', 'shortCode'], ['12345678', 'shortCode'], ['012345', 'shortCode'],
    ['123456789', 'international'], ['447700900123', 'international'], ['123456789012345', 'international'],
  ];
  for (const [id, kind] of kinds) {
    it(`${JSON.stringify(id)} is ${kind}`, () => {
      const r = checkSenderId(id);
      expect(r.ok ? r.kind : 'refused').toBe(kind);
    });
  }

  const refused: Array<[string, string, string]> = [
    ['empty', '', 'must not be empty'],
    ['a NUL (it would end source_addr and shift the fields after it)', 'AB\u0000C', 'must not hold U+0000'],
    ['U+0100 (written as a NUL by an ASCII encoder)', 'AB\u0100', 'must not hold U+0100'],
    ['a GSM character outside ASCII', 'Café', 'must not hold U+00E9'],
    ['a GSM extension character', 'Shop€', 'must not hold U+20AC'],
    ['a control character', 'AB\nCD', 'must not hold U+000A'],
    ['DEL', 'AB\u007f', 'must not hold U+007F'],
    ['an emoji', 'Hi😀', 'must not hold U+1F600'],
    ['a lone surrogate', 'Hi\ud800', 'must not hold U+D800'],
    ['a backtick (outside the GSM basic table)', 'Shop`s', 'must not hold "`" (U+0060)'],
    ['12 characters', 'ABCDEFGHIJKL', 'is 12 characters; an alphanumeric sender ID is at most 11'],
    ['a number with +', '+4477009001', 'has no letter'],
    ['a number with spaces', '44 7700 900', 'has no letter'],
    ['a leading space', ' MyBrand', 'must not start or end with a space'],
    ['a trailing space', 'MyBrand ', 'must not start or end with a space'],
    ['2 digits', '12', 'is 2 digits'],
    ['16 digits', '1234567890123456', 'is 16 digits'],
    ['a national number', '07700900123', 'starts with 0'],
  ];
  for (const [what, id, problem] of refused) {
    it(`refuses ${what}`, () => {
      const r = checkSenderId(id);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.problem).toContain(problem);
    });
  }

  it('never quotes a character that is not printable ASCII', () => {
    for (const id of ['A\u0000', 'A\u001b[31m', 'A\u202e']) {
      const r = checkSenderId(id);
      expect(!r.ok && /^[\x20-\x7e–]*$/.test(r.problem)).toBe(true);
    }
  });

  it('accepts only what a C-Octet String carries one octet per character and SMSCs read as GSM: ASCII, no NUL, no control', () => {
    fc.assert(fc.property(fc.oneof(
      fc.string({ unit: 'binary', maxLength: 20 }),
      fc.string({ unit: fc.constantFrom(...ALPHANUMERIC_CHARACTERS, '\0', 'é', '€', '\u0100', '`', '~'), maxLength: 16 }),
    ), (id) => {
      const r = checkSenderId(id);
      if (!r.ok) return;
      expect(id.length).toBeGreaterThan(0);
      expect(id.length).toBeLessThanOrEqual(r.kind === 'alphanumeric' ? 11 : 15);
      for (const ch of id) expect(ALPHANUMERIC_CHARACTERS).toContain(ch);
      if (r.kind !== 'alphanumeric') expect(id).toMatch(/^\d+$/);
    }), { seed: 0x5e4d, numRuns: 2000 });
  });
});
