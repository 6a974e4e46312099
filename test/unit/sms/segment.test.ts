import { describe, expect, it } from 'vitest';
import { encodeMessage, segmentLimits, type EncodeOptions, type EncodeResult } from '../../../src/sms/segment.js';

const OPTIONS: EncodeOptions = {
  messageType: 'AUTO',
  defaultAlphabet: 'gsm7',
  nationalShift: false,
  longMessages: 'udh',
  udhReferenceBits: 8,
  maxParts: 10,
  reference: 0x1ab,
};

function ok(r: EncodeResult): Extract<EncodeResult, { ok: true }> {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r;
}
const hex = (b: Buffer | undefined): string => b?.toString('hex') ?? '';

describe('segment limits', () => {
  it('are 160/153 and 70/67 with an 8-bit reference, 160/152 and 70/66 with a 16-bit one', () => {
    expect(segmentLimits('GSM-7', 8)).toEqual({ single: 160, perPart: 153 });
    expect(segmentLimits('GSM-7', 16)).toEqual({ single: 160, perPart: 152 });
    expect(segmentLimits('UNICODE', 8)).toEqual({ single: 70, perPart: 67 });
    expect(segmentLimits('UNICODE', 16)).toEqual({ single: 70, perPart: 66 });
  });
});

describe('encodeMessage: one part', () => {
  it('sends GSM text as unpacked septets under data_coding 0', () => {
    const r = ok(encodeMessage('@£$ €', OPTIONS));
    expect(r).toMatchObject({ encoding: 'GSM-7', dataCoding: 0 });
    expect(r.parts).toHaveLength(1);
    expect(r.parts[0]).toEqual({ dataCoding: 0, esmClass: 0, shortMessage: Buffer.from('000102201b65', 'hex') });
  });

  it('sends UNICODE as UCS-2BE under data_coding 8, an emoji as a surrogate pair', () => {
    const r = ok(encodeMessage('Ж😀', OPTIONS));
    expect(r).toMatchObject({ encoding: 'UNICODE', dataCoding: 8 });
    expect(hex(r.parts[0]?.shortMessage)).toBe('0416d83dde00');
  });

  it('sends UCS-2 when asked even for GSM text', () => {
    const r = ok(encodeMessage('hi', { ...OPTIONS, messageType: 'UNICODE' }));
    expect(hex(r.parts[0]?.shortMessage)).toBe('00680069');
  });

  it('sends empty text as one empty part', () => {
    const r = ok(encodeMessage('', OPTIONS));
    expect(r.parts).toEqual([{ dataCoding: 0, esmClass: 0, shortMessage: Buffer.alloc(0) }]);
  });
});

describe('encodeMessage: messageType TEXT', () => {
  it('refuses characters outside GSM-7 and names them', () => {
    const r = encodeMessage('Say “hi” — now “again”', { ...OPTIONS, messageType: 'TEXT' });
    expect(r).toEqual({
      ok: false,
      error: {
        code: 'NOT_GSM7',
        message: 'message contains characters outside GSM-7: “ ” —; send it as UNICODE',
        characters: ['“', '”', '—'],
      },
    });
  });

  it('shows invisible characters by code point', () => {
    const r = encodeMessage('a\tb\u00a0', { ...OPTIONS, messageType: 'TEXT' });
    expect(!r.ok && r.error.message).toBe('message contains characters outside GSM-7: U+0009 U+00A0; send it as UNICODE');
  });

  it('keeps Turkish text in GSM-7 with a national shift, and says so in the UDH', () => {
    const r = ok(encodeMessage('şişe', { ...OPTIONS, messageType: 'TEXT', nationalShift: true }));
    expect(r.nationalShift).toEqual({ locking: 1, single: 0 });
    expect(r.parts[0]).toEqual({ dataCoding: 0, esmClass: 0x40, shortMessage: Buffer.from('032501011d691d65', 'hex') });
  });

  it('names only what no enabled table can take when a national shift is on', () => {
    const r = encodeMessage('şişe “x”', { ...OPTIONS, messageType: 'TEXT', nationalShift: true });
    expect(!r.ok && r.error).toMatchObject({ code: 'NOT_GSM7', characters: ['“', '”'] });
    const off = encodeMessage('şişe', { ...OPTIONS, messageType: 'TEXT', nationalShift: [2, 3] });
    expect(!off.ok && off.error).toMatchObject({ code: 'NOT_GSM7', characters: ['ş'] });
  });

  it('leaves national shift off for a Latin-1 default alphabet', () => {
    const r = encodeMessage('şişe', { ...OPTIONS, messageType: 'TEXT', nationalShift: true, defaultAlphabet: 'latin1' });
    expect(!r.ok && r.error.code).toBe('NOT_GSM7');
  });

  it('takes room for the shift elements: 155 septets alone, 149 per part', () => {
    const o = { ...OPTIONS, nationalShift: true } as const;
    expect(ok(encodeMessage('ş' + 'a'.repeat(154), o)).parts).toHaveLength(1);
    const two = ok(encodeMessage('ş' + 'a'.repeat(155), o));
    expect(two.parts).toHaveLength(2);
    // UDH 08 00 03 ref 02 01 25 01 01: 9 octets, ceil(72/7) = 11 septets, 149 left.
    expect(two.parts.map((p) => hex(p.shortMessage.subarray(0, 9)))).toEqual(['080003ab0201250101', '080003ab0202250101']);
    expect(two.parts.map((p) => p.shortMessage.length - 9)).toEqual([149, 7]);
  });
});

describe('encodeMessage: the default alphabet of data_coding 0', () => {
  it('writes ISO-8859-1 for a latin1 upstream', () => {
    const r = ok(encodeMessage('é@£{', { ...OPTIONS, defaultAlphabet: 'latin1' }));
    expect(r).toMatchObject({ encoding: 'GSM-7', dataCoding: 0 });
    expect(hex(r.parts[0]?.shortMessage)).toBe('e940a37b');
  });

  it('refuses a GSM character Latin-1 lacks under TEXT, and falls back to UCS-2 under AUTO', () => {
    const text = 'Δ costs 5 €';
    const refused = encodeMessage(text, { ...OPTIONS, defaultAlphabet: 'latin1', messageType: 'TEXT' });
    expect(!refused.ok && refused.error).toMatchObject({ code: 'NOT_REPRESENTABLE', characters: ['Δ', '€'] });
    expect(ok(encodeMessage(text, { ...OPTIONS, defaultAlphabet: 'latin1' })).encoding).toBe('UNICODE');
  });

  it('writes 7-bit ASCII for an ascii upstream and refuses the rest', () => {
    expect(hex(ok(encodeMessage('a{', { ...OPTIONS, defaultAlphabet: 'ascii' })).parts[0]?.shortMessage)).toBe('617b');
    const r = encodeMessage('café', { ...OPTIONS, defaultAlphabet: 'ascii', messageType: 'TEXT' });
    expect(!r.ok && r.error).toMatchObject({ code: 'NOT_REPRESENTABLE', characters: ['é'] });
  });

  it('counts extension characters as two septets on a Latin-1 upstream too', () => {
    expect(ok(encodeMessage('{'.repeat(80), { ...OPTIONS, defaultAlphabet: 'latin1' })).parts).toHaveLength(1);
    expect(ok(encodeMessage('{'.repeat(81), { ...OPTIONS, defaultAlphabet: 'latin1' })).parts).toHaveLength(2);
  });
});

describe('encodeMessage: long messages', () => {
  it('concatenates by UDH IE 0x00 with the reference masked to 8 bits', () => {
    const r = ok(encodeMessage('a'.repeat(161), OPTIONS));
    expect(r.parts.map((p) => p.esmClass)).toEqual([0x40, 0x40]);
    expect(hex(r.parts[0]?.shortMessage)).toBe('050003ab0201' + '61'.repeat(153));
    expect(hex(r.parts[1]?.shortMessage)).toBe('050003ab0202' + '61'.repeat(8));
  });

  it('concatenates by UDH IE 0x08 with a 16-bit reference, 152 septets per part', () => {
    const r = ok(encodeMessage('a'.repeat(305), { ...OPTIONS, udhReferenceBits: 16, reference: 0x51234 }));
    expect(r.parts.map((p) => hex(p.shortMessage.subarray(0, 7)))).toEqual([
      '06080412340301',
      '06080412340302',
      '06080412340303',
    ]);
    expect(r.parts.map((p) => p.shortMessage.length - 7)).toEqual([152, 152, 1]);
  });

  it('splits UCS-2 at 67 code units with an 8-bit UDH', () => {
    const r = ok(encodeMessage('Ж'.repeat(71), OPTIONS));
    expect(r.parts.map((p) => p.shortMessage.length)).toEqual([6 + 134, 6 + 8]);
  });

  it('carries SAR TLVs instead of a UDH, with the same part sizes', () => {
    const r = ok(encodeMessage('a'.repeat(307), { ...OPTIONS, longMessages: 'sar', reference: 0x12345 }));
    expect(r.parts.map((p) => [p.esmClass, p.shortMessage.length, p.sar])).toEqual([
      [0, 153, { refNum: 0x2345, total: 3, seq: 1 }],
      [0, 153, { refNum: 0x2345, total: 3, seq: 2 }],
      [0, 1, { refNum: 0x2345, total: 3, seq: 3 }],
    ]);
    expect(ok(encodeMessage('short', { ...OPTIONS, longMessages: 'sar' })).parts[0]?.sar).toBeUndefined();
  });

  it('puts the whole text in message_payload in payload mode', () => {
    const r = ok(encodeMessage('a'.repeat(500) + '€', { ...OPTIONS, longMessages: 'payload' }));
    expect(r.parts).toHaveLength(1);
    expect(r.parts[0]?.shortMessage.length).toBe(0);
    expect(r.parts[0]?.esmClass).toBe(0);
    expect(hex(r.parts[0]?.messagePayload)).toBe('61'.repeat(500) + '1b65');
  });

  it('refuses more parts than maxParts, in every mode', () => {
    for (const longMessages of ['udh', 'sar', 'payload'] as const) {
      const r = encodeMessage('a'.repeat(153 * 3 + 1), { ...OPTIONS, longMessages, maxParts: 3 });
      expect(r).toEqual({
        ok: false,
        error: { code: 'TOO_MANY_PARTS', message: 'message needs 4 parts; at most 3 are allowed', parts: 4, maxParts: 3 },
      });
    }
  });

  it('never makes more than 255 parts, whatever maxParts says', () => {
    const r = encodeMessage('a'.repeat(153 * 255 + 1), { ...OPTIONS, maxParts: 1000 });
    expect(!r.ok && r.error).toMatchObject({ code: 'TOO_MANY_PARTS', parts: 256, maxParts: 255 });
    expect(ok(encodeMessage('a'.repeat(153 * 255), { ...OPTIONS, maxParts: 1000 })).parts).toHaveLength(255);
  });

  it('keeps an escape sequence in one part', () => {
    const r = ok(encodeMessage('a'.repeat(152) + '{' + 'a'.repeat(152), OPTIONS));
    expect(r.parts.map((p) => p.shortMessage.length - 6)).toEqual([152, 153, 1]);
    expect(hex(r.parts[1]?.shortMessage.subarray(6, 8))).toBe('1b28');
  });

  it('keeps a surrogate pair in one part', () => {
    const r = ok(encodeMessage('Ж'.repeat(66) + '😀' + 'Ж'.repeat(66), OPTIONS));
    expect(r.parts.map((p) => (p.shortMessage.length - 6) / 2)).toEqual([66, 67, 1]);
    expect(hex(r.parts[1]?.shortMessage.subarray(6, 10))).toBe('d83dde00');
  });
});

describe('half a surrogate pair', () => {
  it('is refused as NOT_REPRESENTABLE whatever the type, never sent as D800', () => {
    for (const messageType of ['UNICODE', 'AUTO', 'TEXT'] as const) {
      for (const [text, at] of [['a\ud800b', 2], ['end \ud83d', 5], ['\ude00 start', 1], ['ok 😀 then \udfff', 12]] as const) {
        const r = encodeMessage(text, { ...OPTIONS, messageType });
        expect(r.ok).toBe(false);
        if (!r.ok) {
          expect(r.error.code).toBe('NOT_REPRESENTABLE');
          expect(r.error.message).toContain(`at character ${at}`);
        }
      }
    }
  });

  it('a whole pair is one character and goes out as both halves', () => {
    const r = encodeMessage('😀', { ...OPTIONS, messageType: 'UNICODE' });
    expect(r.ok && r.parts[0]!.shortMessage.toString('hex')).toBe('d83dde00');
  });
});
