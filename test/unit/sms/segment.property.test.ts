import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gsm7Septets } from '../../../src/sms/gsm7.js';
import { identify } from '../../../src/sms/identify.js';
import { encodeMessage, type EncodeOptions, type EncodedPart } from '../../../src/sms/segment.js';
import { decodeShortMessage, type DefaultAlphabet } from '../../../src/sms/text-codec.js';
import { parseUdh, udhSeptets, type ParsedUdh } from '../../../src/sms/udh.js';
import { encodeOptions } from '../../support/sms.js';

const BASIC = [
  ...'@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà',
];
const EXTENSION = [...'\f^{}\\[~]|€'];
const NATIONAL = [...'ĞğİıŞşçÁÍÓÚáíóúêÔôÃÕãõâÂÊÀ'];
const NON_GSM_BMP = [...'“”—…Ж中ÿ\t\u00a0\ufffd'];
const ASTRAL = ['😀', '👍', '𝄞', '🇬', '\u{1F9D1}', '\u{10FFFF}'];

const pick = (chars: string[], weight: number) => ({ arbitrary: fc.constantFrom(...chars), weight });
const join = (a: string[]): string => a.join('');
/** GSM-only texts, long enough for many parts. */
// size 'max': fast-check's default size keeps arrays to a handful of items, too short to split.
const gsmText = fc.array(fc.oneof(pick(BASIC, 8), pick(EXTENSION, 2)), { maxLength: 700, size: 'max' }).map(join);
/** Texts across GSM basic, extension, national, BMP non-GSM and astral characters. */
const mixedText = fc
  .array(fc.oneof(pick(BASIC, 10), pick(EXTENSION, 4), pick(NATIONAL, 2), pick(NON_GSM_BMP, 1), pick(ASTRAL, 1)), {
    maxLength: 400,
    size: 'max',
  })
  .map(join);
const anyText = fc.oneof(gsmText, mixedText, fc.string({ unit: 'binary', maxLength: 200, size: 'max' }));
const reference = fc.integer({ min: 0, max: 0x7fffffff });

const BASE: EncodeOptions = encodeOptions();

interface Opened {
  readonly udh: ParsedUdh | undefined;
  readonly body: Buffer;
  readonly text: string;
}

/** What a handset would do with one part: strip the UDH, decode by data_coding. */
function open(part: EncodedPart, alphabet: DefaultAlphabet): Opened {
  const data = part.messagePayload ?? part.shortMessage;
  const udh = (part.esmClass & 0x40) !== 0 ? parseUdh(data) : undefined;
  if ((part.esmClass & 0x40) !== 0) expect(udh).toBeDefined();
  const body = udh ? udh.body : data;
  return { udh, body, text: decodeShortMessage(body, part.dataCoding, alphabet, udh?.nationalShift) };
}

/** No ESC without its code after it: the part does not end inside an escape sequence. */
function escapesWhole(septets: Buffer): boolean {
  for (let i = 0; i < septets.length; i++) if (septets[i] === 0x1b && ++i >= septets.length) return false;
  return true;
}

/** The part neither starts with a low surrogate nor ends with a high one. */
function pairsWhole(ucs2: Buffer): boolean {
  if (ucs2.length === 0) return true;
  const first = ucs2.readUInt16BE(0);
  const last = ucs2.readUInt16BE(ucs2.length - 2);
  return !(first >= 0xdc00 && first <= 0xdfff) && !(last >= 0xd800 && last <= 0xdbff);
}

const CONFIGS: ReadonlyArray<{ name: string; options: Partial<EncodeOptions> }> = [
  { name: 'udh, 8-bit reference', options: {} },
  { name: 'udh, 16-bit reference', options: { udhReferenceBits: 16 } },
  { name: 'sar', options: { longMessages: 'sar' } },
  { name: 'udh, Latin-1 upstream', options: { defaultAlphabet: 'latin1' } },
  { name: 'udh, national shift', options: { nationalShift: true } },
  { name: 'sar, national shift, 16-bit setting ignored', options: { longMessages: 'sar', nationalShift: true, udhReferenceBits: 16 } },
  { name: 'udh, always UCS-2', options: { messageType: 'UNICODE' } },
];

describe.each(CONFIGS)('encodeMessage properties: $name', ({ options }) => {
  it('joins back to the original text, every part within its limit and whole', () => {
    fc.assert(
      fc.property(anyText, reference, (text, ref) => {
        const o: EncodeOptions = { ...BASE, ...options, reference: ref };
        const r = encodeMessage(text, o);
        expect(r.ok).toBe(true);
        if (!r.ok) return;
        const opened = r.parts.map((p) => open(p, o.defaultAlphabet));
        expect(opened.map((p) => p.text).join('')).toBe(text);
        const tables = { locking: r.nationalShift?.locking ?? 0, single: r.nationalShift?.single ?? 0 };
        opened.forEach((p, i) => {
          const part = r.parts[i] as EncodedPart;
          expect(part.dataCoding).toBe(r.dataCoding);
          const udhOctets = p.udh?.udhLength ?? 0;
          if (r.encoding === 'UNICODE') {
            expect(r.dataCoding).toBe(8);
            expect(part.shortMessage.length).toBeLessThanOrEqual(140);
            expect(pairsWhole(p.body)).toBe(true);
          } else {
            expect(r.dataCoding).toBe(0);
            expect(udhSeptets(udhOctets) + (gsm7Septets(p.text, tables) ?? Infinity)).toBeLessThanOrEqual(160);
            if (o.defaultAlphabet === 'gsm7') {
              expect(p.body.length).toBe(gsm7Septets(p.text, tables));
              expect(escapesWhole(p.body)).toBe(true);
            }
          }
          if (r.parts.length > 1 && o.longMessages === 'sar') {
            // Same per-part room as an 8-bit UDH: 153 septets or 67 code units (less any shift IEs).
            const room = r.encoding === 'UNICODE' ? 134 : 153 * 7;
            const used = r.encoding === 'UNICODE' ? p.body.length : ((gsm7Septets(p.text, tables) ?? 0) + udhSeptets(udhOctets)) * 7;
            expect(used).toBeLessThanOrEqual(room);
          }
        });
      }),
    );
  });

  it('numbers the parts right: one reference, the total, 1..total', () => {
    fc.assert(
      fc.property(anyText, reference, (text, ref) => {
        const o: EncodeOptions = { ...BASE, ...options, reference: ref };
        const r = encodeMessage(text, o);
        if (!r.ok) return;
        const total = r.parts.length;
        r.parts.forEach((part, i) => {
          const { udh } = open(part, o.defaultAlphabet);
          if (o.longMessages === 'sar') {
            expect(udh?.concat).toBeUndefined();
            expect(part.sar).toEqual(total === 1 ? undefined : { refNum: ref & 0xffff, total, seq: i + 1 });
            return;
          }
          expect(part.sar).toBeUndefined();
          if (total === 1) {
            expect(udh?.concat).toBeUndefined();
            return;
          }
          const bits = o.udhReferenceBits;
          expect(udh?.concat).toEqual({ ref: ref & (bits === 16 ? 0xffff : 0xff), total, seq: i + 1, referenceBits: bits });
        });
      }),
    );
  });
});

describe('encodeMessage agrees with identify', () => {
  it('makes identify(text).smscount parts (udh 8-bit, AUTO, gsm7) and SAR the same', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const id = identify(text);
        for (const longMessages of ['udh', 'sar'] as const) {
          const r = encodeMessage(text, { ...BASE, longMessages });
          expect(r.ok && r.parts.length).toBe(id.smscount);
          expect(r.ok && r.encoding).toBe(id.messageType);
        }
        expect(id.charCount).toBe(id.messageType === 'GSM-7' ? gsm7Septets(text) : text.length);
        expect(id.charLimit).toBe(
          id.messageType === 'GSM-7' ? (id.smscount === 1 ? 160 : 153) : id.smscount === 1 ? 70 : 67,
        );
      }),
    );
  });

  it('refuses exactly the texts that need more than maxParts, in every mode', () => {
    fc.assert(
      fc.property(anyText, fc.integer({ min: 1, max: 6 }), fc.constantFrom('udh', 'sar', 'payload'), (text, maxParts, longMessages) => {
        const needed = identify(text).smscount;
        const r = encodeMessage(text, { ...BASE, longMessages, maxParts });
        if (needed <= maxParts) {
          expect(r.ok).toBe(true);
        } else {
          expect(r).toMatchObject({ ok: false, error: { code: 'TOO_MANY_PARTS', parts: needed, maxParts } });
        }
      }),
    );
  });

  it('payload mode carries the whole text in one part', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const r = encodeMessage(text, { ...BASE, longMessages: 'payload' });
        expect(r.ok).toBe(true);
        if (!r.ok) return;
        expect(r.parts).toHaveLength(1);
        const part = r.parts[0] as EncodedPart;
        expect(part.shortMessage.length).toBe(0);
        expect(open(part, 'gsm7').text).toBe(text);
      }),
    );
  });
});
