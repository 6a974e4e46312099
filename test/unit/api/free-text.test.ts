/**
 * The free-text rule against Unicode's own character properties: over every UTF-16 code unit, a
 * character is refused exactly when it is a control (Cc), a line or paragraph separator, a
 * Bidi_Control character or half a surrogate pair.
 */
import { describe, expect, it } from 'vitest';
import { FREE_TEXT_RULE, freeTextProblem } from '../../../src/api/validation.js';

const REFUSED = /[\p{Cc}\p{Bidi_Control}\u2028\u2029]/u;

describe('freeTextProblem', () => {
  it('refuses every control, separator and Bidi_Control character of the BMP, and nothing else', () => {
    const wrong: string[] = [];
    for (let c = 0; c <= 0xffff; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue; // surrogates: below
      const ch = String.fromCharCode(c);
      // Inside text, as a client would hide it.
      if ((freeTextProblem(`a${ch}b`) !== null) !== REFUSED.test(ch)) wrong.push(`U+${c.toString(16).toUpperCase().padStart(4, '0')}`);
    }
    expect(wrong).toEqual([]);
  });

  it('names each bidirectional mark it refuses, and the rule names them all', () => {
    for (const [ch, code] of [['\u061c', 'U+061C'], ['\u200e', 'U+200E'], ['\u200f', 'U+200F'], ['\u202e', 'U+202E'], ['\u2069', 'U+2069']]) {
      expect(freeTextProblem(`Bank${ch}1234`)).toContain(`must not hold ${code} (character 5)`);
    }
    expect(FREE_TEXT_RULE).toContain('U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069');
  });

  it('takes whole surrogate pairs (emoji) and refuses a half', () => {
    expect(freeTextProblem('ok 😀 \u200d')).toBeNull();
    expect(freeTextProblem('half \ud83d')).toContain('unpaired UTF-16 surrogate');
    expect(freeTextProblem('\ude00 half')).toContain('unpaired UTF-16 surrogate');
  });
});
