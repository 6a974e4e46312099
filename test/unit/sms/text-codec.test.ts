import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { charsetOf, decodeShortMessage, decodeUserData } from '../../../src/sms/text-codec.js';
import { decodeUcs2, encodeUcs2 } from '../../../src/sms/ucs2.js';

const bytes = (h: string): Buffer => Buffer.from(h, 'hex');

describe('UCS-2 (data_coding 8)', () => {
  it.each([
    ['A', '0041'],
    ['Ж', '0416'],
    ['€', '20ac'],
    ['😀', 'd83dde00'],
    ['', ''],
  ])('encodes %j as %s, big-endian', (text, hex) => {
    expect(encodeUcs2(text).toString('hex')).toBe(hex);
    expect(decodeUcs2(bytes(hex))).toBe(text);
  });

  it('keeps the halves of a surrogate pair, so parts split between them join again', () => {
    expect(decodeUcs2(bytes('d83d')) + decodeUcs2(bytes('de00'))).toBe('😀');
  });

  it('marks a dangling odd octet', () => {
    expect(decodeUcs2(bytes('004100'))).toBe('A\ufffd');
  });

  it('round-trips any string, lone surrogates included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', size: 'max', maxLength: 300 }), (s) => {
        expect(decodeUcs2(encodeUcs2(s))).toBe(s);
      }),
    );
    expect(decodeUcs2(encodeUcs2('a\ud800b'))).toBe('a\ud800b');
  });

  it('decodes a long message_payload', () => {
    const text = 'Ж'.repeat(20_000);
    expect(decodeUcs2(encodeUcs2(text))).toBe(text);
  });
});

describe('decodeShortMessage by data_coding (SMPP v3.4 §5.2.19)', () => {
  it('reads data_coding 0 by the upstream default alphabet', () => {
    expect(decodeShortMessage(bytes('000102201b65'), 0, 'gsm7')).toBe('@£$ €');
    expect(decodeShortMessage(bytes('e940a3'), 0, 'latin1')).toBe('é@£');
    expect(decodeShortMessage(bytes('48657921'), 0, 'ascii')).toBe('Hey!');
  });

  it('reads IA5 (1) as ASCII, keeping a stray high byte as Latin-1', () => {
    expect(decodeShortMessage(bytes('4869'), 1, 'gsm7')).toBe('Hi');
    expect(decodeShortMessage(bytes('e9'), 1, 'gsm7')).toBe('é');
  });

  it('reads Latin-1 (3), UCS-2 (8), Cyrillic (6) and Hebrew (7)', () => {
    expect(decodeShortMessage(bytes('e9e8ff'), 3, 'gsm7')).toBe('éèÿ');
    expect(decodeShortMessage(bytes('0416d83dde00'), 8, 'gsm7')).toBe('Ж😀');
    expect(decodeShortMessage(bytes('b6f0'), 6, 'gsm7')).toBe('Ж№');
    expect(decodeShortMessage(bytes('e0'), 7, 'gsm7')).toBe('א');
  });

  it('gives binary data (2, 4, and what it cannot read) as lowercase hex without a prefix', () => {
    for (const dc of [2, 4, 5, 9, 0x0a, 0x0e, 0x20]) {
      expect(charsetOf(dc, 'gsm7')).toBe('binary');
      expect(decodeShortMessage(bytes('00ff1b'), dc, 'gsm7')).toBe('00ff1b');
    }
  });

  it('reads the 1111 group by bit 2: 8-bit data when set, GSM 7-bit when clear (TS 23.038 §4)', () => {
    for (const dc of [0xf0, 0xf1, 0xf2, 0xf3]) expect(decodeShortMessage(bytes('48691b65'), dc, 'gsm7')).toBe('Hi€');
    for (const dc of [0xf4, 0xf5, 0xf6, 0xf7]) expect(decodeShortMessage(bytes('4869'), dc, 'gsm7')).toBe('4869');
    // 7-bit text reaches an ESME in the SMSC's default representation, like data_coding 0.
    expect(decodeShortMessage(bytes('e9'), 0xf1, 'latin1')).toBe('é');
  });

  it('reads the message waiting groups: 1100 and 1101 GSM 7-bit, 1110 UCS-2', () => {
    expect(decodeShortMessage(bytes('4869'), 0xc0, 'gsm7')).toBe('Hi');
    expect(decodeShortMessage(bytes('4869'), 0xd8, 'gsm7')).toBe('Hi');
    expect(decodeShortMessage(bytes('0416'), 0xe0, 'gsm7')).toBe('Ж');
  });

  it('uses the national shift tables a UDH named', () => {
    expect(decodeShortMessage(bytes('1d1b73'), 0, 'gsm7', { locking: 1, single: 1 })).toBe('şş');
    expect(decodeShortMessage(bytes('1d1b73'), 0, 'gsm7', { locking: 1 })).toBe('şs');
    expect(decodeShortMessage(bytes('1b73'), 0, 'gsm7', { single: 1 })).toBe('ş');
    // Without them, the same septets are default characters.
    expect(decodeShortMessage(bytes('1d1b73'), 0, 'gsm7')).toBe('æs');
  });

  it('accepts a Uint8Array view into a larger buffer', () => {
    const whole = bytes('ff4869ff');
    expect(decodeShortMessage(whole.subarray(1, 3), 3, 'gsm7')).toBe('Hi');
    expect(decodeShortMessage(new Uint8Array(whole.buffer, whole.byteOffset + 1, 2), 2, 'gsm7')).toBe('4869');
  });
});

describe('decodeUserData: what the bytes break of their data_coding', () => {
  it.each<[string, string, number, string, string[]]>([
    ['clean GSM 7-bit, an escape and all', '48691b65', 0, 'Hi€', []],
    ['GSM 7-bit with an octet above 0x7F', '48e969', 0, 'H\ufffdi', ['INVALID_BYTES']],
    ['GSM 7-bit with an octet above 0x7F after an escape', '481bff', 0, 'H\ufffd', ['INVALID_BYTES']],
    ['GSM 7-bit ending in an escape', '48691b', 0, 'Hi', ['INVALID_BYTES']],
    ['IA5 above 0x7F (read as Latin-1)', '48e9', 1, 'Hé', ['INVALID_BYTES']],
    ['Latin-1: every octet is a character', 'ff80', 3, 'ÿ\u0080', []],
    ['UCS-2 of odd length', '004100', 8, 'A\ufffd', ['UCS2_ODD_LENGTH']],
    ['UCS-2 with an unpaired high surrogate', 'd83d0041', 8, '\ud83dA', ['UCS2_UNPAIRED_SURROGATE']],
    ['UCS-2 with an unpaired low surrogate', '0041de00', 8, 'A\ude00', ['UCS2_UNPAIRED_SURROGATE']],
    ['UCS-2 with a pair', 'd83dde00', 8, '😀', []],
    ['UCS-2 odd and unpaired', 'd83d00', 8, '\ud83d\ufffd', ['UCS2_ODD_LENGTH', 'UCS2_UNPAIRED_SURROGATE']],
    ['ISO-8859-8 with an unassigned octet', 'e0a1', 7, 'א\ufffd', ['INVALID_BYTES']],
    ['ISO-8859-5', 'b6f0', 6, 'Ж№', []],
    ['binary', '00ff1b', 4, '00ff1b', []],
    ['GSM 7-bit 0x00 is @', '004800', 0, '@H@', []],
    ['binary with zero octets', '0000', 2, '0000', []],
  ])('%s', (_name, hex, dataCoding, text, problems) => {
    expect(decodeUserData(bytes(hex), dataCoding, 'gsm7')).toEqual({ text, problems });
    expect(decodeShortMessage(bytes(hex), dataCoding, 'gsm7')).toBe(text);
  });

  it.each<[string, string, number, string, string, string[]]>([
    ['IA5', '480069', 1, 'H\u0000i', 'H\ufffdi', ['INVALID_BYTES']],
    ['Latin-1', '4800', 3, 'H\u0000', 'H\ufffd', ['INVALID_BYTES']],
    ['ISO-8859-5', '00b6', 6, '\u0000Ж', '\ufffdЖ', ['INVALID_BYTES']],
    ['UCS-2', '004800000069', 8, 'H\u0000i', 'H\ufffdi', ['INVALID_BYTES']],
    ['UCS-2 odd and unpaired', '0000d83d00', 8, '\u0000\ud83d\ufffd', '\ufffd\ud83d\ufffd', ['UCS2_ODD_LENGTH', 'UCS2_UNPAIRED_SURROGATE', 'INVALID_BYTES']],
  ])('%s with a NUL: U+FFFD and INVALID_BYTES in the text to store (PostgreSQL text holds no U+0000); decodeShortMessage keeps it', (_name, hex, dataCoding, decoded, text, problems) => {
    expect(decodeUserData(bytes(hex), dataCoding, 'gsm7')).toEqual({ text, problems });
    expect(decodeShortMessage(bytes(hex), dataCoding, 'gsm7')).toBe(decoded);
  });
});
