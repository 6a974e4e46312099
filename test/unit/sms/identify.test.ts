import { describe, expect, it } from 'vitest';
import { identify } from '../../../src/sms/identify.js';

const a = (n: number): string => 'a'.repeat(n);
const zhe = (n: number): string => 'Ж'.repeat(n);

describe('identify, as the provider counts (§2.5, §8)', () => {
  it.each([
    ['empty text', '', 'GSM-7', 1, 0, 160],
    ['one GSM character', 'a', 'GSM-7', 1, 1, 160],
    ['160 GSM characters', a(160), 'GSM-7', 1, 160, 160],
    ['161 GSM characters', a(161), 'GSM-7', 2, 161, 153],
    ['153 * 2 GSM characters', a(306), 'GSM-7', 2, 306, 153],
    ['306 + 1 GSM characters', a(307), 'GSM-7', 3, 307, 153],
    ['70 UNICODE characters', zhe(70), 'UNICODE', 1, 70, 70],
    ['71 UNICODE characters', zhe(71), 'UNICODE', 2, 71, 67],
    ['67 * 2 UNICODE characters', zhe(134), 'UNICODE', 2, 134, 67],
    ['67 * 2 + 1 UNICODE characters', zhe(135), 'UNICODE', 3, 135, 67],
    ['80 extension characters (160 septets)', '{'.repeat(80), 'GSM-7', 1, 160, 160],
    ['81 extension characters (162 septets)', '{'.repeat(81), 'GSM-7', 2, 162, 153],
    ['159 GSM characters and a euro sign', a(159) + '€', 'GSM-7', 2, 161, 153],
  ])('%s', (_name, text, messageType, smscount, charCount, charLimit) => {
    expect(identify(text)).toEqual({ message: text, messageType, smscount, charCount, charLimit });
  });

  it('counts extension characters as two', () => {
    expect(identify('^{}\\[~]|€').charCount).toBe(18);
    expect(identify('a\fb').charCount).toBe(4);
  });

  it.each([
    ['a curly quote', 'It’s here'],
    ['an opening curly quote', 'Say “hi'],
    ['an em dash', 'wait — now'],
    ['an ellipsis character', 'and so…'],
    ['an emoji', 'ok 👍'],
  ])('makes the whole message UNICODE for one %s', (_name, text) => {
    const r = identify(text);
    expect(r.messageType).toBe('UNICODE');
    expect(r.charCount).toBe(text.length);
    expect(r.charLimit).toBe(70);
  });

  it('counts an emoji as two UTF-16 code units', () => {
    expect(identify('😀').charCount).toBe(2);
    expect(identify('😀'.repeat(35))).toMatchObject({ smscount: 1, charCount: 70 });
    expect(identify('😀'.repeat(36))).toMatchObject({ smscount: 2, charCount: 72, charLimit: 67 });
  });

  it('never splits an escape sequence, so may need a part more than the division says', () => {
    // 306 septets would be two parts of 153, but the { cannot straddle parts 1 and 2.
    const text = a(152) + '{' + a(152);
    expect(identify(text)).toMatchObject({ messageType: 'GSM-7', charCount: 306, smscount: 3 });
  });

  it('never splits a surrogate pair, so may need a part more than the division says', () => {
    const text = zhe(66) + '😀' + zhe(66);
    expect(identify(text)).toMatchObject({ messageType: 'UNICODE', charCount: 134, smscount: 3 });
  });
});
