import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  charSeptets,
  chooseNationalShift,
  decodeGsm7,
  encodeGsm7,
  gsm7Septets,
  isGsm7,
  nonGsmCharacters,
  type Gsm7Tables,
} from '../../../src/sms/gsm7.js';

const hex = (b: Buffer): string => b.toString('hex');
function septets(text: string, tables?: Gsm7Tables): string {
  const r = encodeGsm7(text, tables);
  if (!r.ok) throw new Error(`not encodable: ${r.characters.join(' ')}`);
  return hex(r.septets);
}

const BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const EXTENSION = '\f^{}\\[~]|€';

describe('GSM 03.38 default alphabet (TS 23.038 §6.2.1)', () => {
  it.each([
    ['@£$', '000102'],
    ['€', '1b65'],
    ['Hello', '48656c6c6f'],
    ['^{}\\[~]|', '1b141b281b291b2f1b3c1b3d1b3e1b40'],
    ['\f', '1b0a'],
    ['ΔΦΓΛΩΠΨΣΘΞ_', '1012131415161718191a11'],
    ['¡¿ÄÖÑÜ§äöñüà', '40605b5c5d5e5f7b7c7d7e7f'],
    ['\n\r', '0a0d'],
    ['ÆæßÉ', '1c1d1e1f'],
  ])('encodes %j as %s, unpacked', (text, bytes) => {
    expect(septets(text)).toBe(bytes);
    expect(decodeGsm7(Buffer.from(bytes, 'hex'))).toBe(text);
  });

  it('has 127 basic characters and 10 extension characters, all round-tripping', () => {
    expect([...BASIC]).toHaveLength(127);
    for (const ch of BASIC) expect(charSeptets(ch)).toBe(1);
    for (const ch of EXTENSION) expect(charSeptets(ch)).toBe(2);
    expect(decodeGsm7(Buffer.from(septets(BASIC + EXTENSION), 'hex'))).toBe(BASIC + EXTENSION);
  });

  it('counts extension characters as two septets', () => {
    expect(gsm7Septets('a{b')).toBe(4);
    expect(gsm7Septets('€€')).toBe(4);
    expect(gsm7Septets('')).toBe(0);
    expect(gsm7Septets('a“')).toBeUndefined();
  });

  it('refuses what is outside the alphabet, and names each character once, in order', () => {
    expect(isGsm7('Hello @ world {}')).toBe(true);
    expect(isGsm7('Say “hi”')).toBe(false);
    expect(isGsm7('\x1b')).toBe(false);
    expect(nonGsmCharacters('Say “hi” — ok… “again” 😀 ç')).toEqual(['“', '”', '—', '…', '😀', 'ç']);
    const r = encodeGsm7('a—b😀');
    expect(r).toEqual({ ok: false, characters: ['—', '😀'] });
  });

  it('decodes leniently as a receiver must', () => {
    // ESC + a code the extension table lacks: the basic character (§6.2.1.1).
    expect(decodeGsm7(Buffer.from([0x1b, 0x41]))).toBe('A');
    // ESC ESC: reserved for another table, shown as a space.
    expect(decodeGsm7(Buffer.from([0x61, 0x1b, 0x1b, 0x62]))).toBe('a b');
    // A trailing ESC is dropped; an octet that is no septet is U+FFFD.
    expect(decodeGsm7(Buffer.from([0x61, 0x1b]))).toBe('a');
    expect(decodeGsm7(Buffer.from([0x61, 0xe9]))).toBe('a\ufffd');
  });

  it('round-trips any text of GSM characters', () => {
    const gsmChar = fc.constantFrom(...BASIC, ...EXTENSION);
    fc.assert(
      fc.property(fc.array(gsmChar, { maxLength: 300 }), (chars) => {
        const text = chars.join('');
        const r = encodeGsm7(text);
        expect(r.ok).toBe(true);
        if (!r.ok) return;
        expect(r.septets.length).toBe(gsm7Septets(text));
        expect(decodeGsm7(r.septets)).toBe(text);
      }),
    );
  });
});

describe('national language shift tables (TS 23.038 Annex A)', () => {
  const TR_LOCK = { locking: 1, single: 0 };
  const TR_SINGLE = { locking: 0, single: 1 };
  const ES_SINGLE = { locking: 0, single: 2 };
  const PT_LOCK = { locking: 3, single: 0 };
  const PT_SINGLE = { locking: 0, single: 3 };

  it.each([
    ['ş', TR_SINGLE, '1b73'],
    ['ĞİŞçğış€', TR_SINGLE, '1b471b491b531b631b671b691b731b65'],
    ['ş', TR_LOCK, '1d'],
    ['€ıĞğŞşİç', TR_LOCK, '04070b0c1c1d4060'],
    ['çÁÍÓÚáíóú', ES_SINGLE, '1b091b411b491b4f1b551b611b691b6f1b75'],
    ['êúíóçÔôÁáªÇÀ∞^\\€Ó|ÂâÊºÍÃÕÚ~ãõ`', PT_LOCK, '04060708090b0c0e0f12131415161718191a1c1d1e24405b5c5d607b7c7d'],
    ['êÔôÁáÊÀÃÕÂâ', PT_SINGLE, '1b051b0b1b0c1b0e1b0f1b1f1b411b5b1b5c1b611b7f'],
    // The Greek capitals are basic characters in the default table, so that wins; under the
    // Portuguese locking table, which replaces them, they move to the single shift.
    ['ΦΓΩΠΨΣΘ', PT_SINGLE, '12131516171819'],
    ['ΦΓΩΠΨΣΘ', { locking: 3, single: 3 }, '1b121b131b151b161b171b181b19'],
  ])('encodes %j with %o as %s', (text, tables, bytes) => {
    expect(septets(text, tables)).toBe(bytes);
    expect(decodeGsm7(Buffer.from(bytes, 'hex'), tables)).toBe(text);
  });

  it('loses the default characters a locking table replaces', () => {
    expect(isGsm7('è', TR_LOCK)).toBe(false);
    expect(isGsm7('Ñ', PT_LOCK)).toBe(false);
    // The default extension stays reachable under a locking shift.
    expect(septets('{', TR_LOCK)).toBe('1b28');
  });

  it('has no Spanish locking table: identifier 2 means the default alphabet (§6.2.1.2)', () => {
    expect(septets('è', { locking: 2, single: 0 })).toBe('04');
  });

  it('keeps default text in the default tables', () => {
    expect(chooseNationalShift('Hello {world}')).toEqual({ tables: { locking: 0, single: 0 }, elements: [], septets: 15 });
  });

  it('picks the Turkish locking shift for Turkish text and names it in IE 0x25', () => {
    const c = chooseNationalShift('Çok güzel şişe');
    expect(c?.tables).toEqual({ locking: 1, single: 0 });
    expect(c?.elements.map((e) => [e.iei, hex(e.data)])).toEqual([[0x25, '01']]);
  });

  it('picks a Spanish single shift (IE 0x24) when ñ rules out the Portuguese locking table', () => {
    const c = chooseNationalShift('mañana está');
    expect(c?.tables).toEqual({ locking: 0, single: 2 });
    expect(c?.elements.map((e) => [e.iei, hex(e.data)])).toEqual([[0x24, '02']]);
  });

  it('tries only the languages it is given', () => {
    expect(chooseNationalShift('şişe', [2, 3])).toBeUndefined();
    expect(chooseNationalShift('está', [2])?.tables).toEqual({ locking: 0, single: 2 });
  });

  it('uses both shifts when one table is not enough', () => {
    // è rules out the Turkish locking table; the Turkish single shift alone takes ş.
    expect(chooseNationalShift('è ş')?.tables).toEqual({ locking: 0, single: 1 });
    // ê is only Portuguese, ş only Turkish: one locks, the other shifts, whichever is fewer septets.
    const more = chooseNationalShift('ê ş ş');
    expect(more?.tables).toEqual({ locking: 1, single: 3 });
    expect(more?.elements.map((e) => [e.iei, hex(e.data)])).toEqual([
      [0x25, '01'],
      [0x24, '03'],
    ]);
    expect(chooseNationalShift('ê ê ş')?.tables).toEqual({ locking: 3, single: 1 });
  });

  it('gives up when no combination covers the text', () => {
    expect(chooseNationalShift('ş “quoted”')).toBeUndefined();
    expect(chooseNationalShift('😀')).toBeUndefined();
  });
});
