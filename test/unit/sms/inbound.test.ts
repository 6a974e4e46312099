import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assembleMo, frameMo, type AssembledMo, type MoPart, type MoPiece } from '../../../src/sms/inbound.js';
import { encodeMessage, type EncodeOptions } from '../../../src/sms/segment.js';
import type { DefaultAlphabet } from '../../../src/sms/text-codec.js';
import { encodeOptions } from '../../support/sms.js';

const bytes = (h: string): Buffer => Buffer.from(h, 'hex');
const mo = (over: Partial<MoPart>): MoPart => ({ dataCoding: 0, esmClass: 0, shortMessage: Buffer.alloc(0), ...over });

const BASE: EncodeOptions = encodeOptions({ reference: 7 });

/** The submit_sm parts of `text`, as a handset's MO parts would arrive. */
function partsOf(text: string, options: Partial<EncodeOptions>): MoPart[] {
  const r = encodeMessage(text, { ...BASE, ...options });
  if (!r.ok) throw new Error(r.error.message);
  return r.parts.map((p) => mo({
    dataCoding: p.dataCoding,
    esmClass: p.esmClass,
    shortMessage: p.shortMessage,
    ...(p.sar ? { sar: p.sar } : {}),
    ...(p.messagePayload ? { messagePayload: p.messagePayload } : {}),
  }));
}

/** Frames the parts and assembles what arrived, as the store does once the last one is in. */
function assemble(parts: readonly MoPart[], alphabet: DefaultAlphabet = 'gsm7'): AssembledMo {
  const framed = parts.map(frameMo);
  return assembleMo(framed[0]?.concat?.total ?? 1, framed.map((f) => f.piece), alphabet);
}

describe('frameMo', () => {
  it('a part without concatenation is part 1 of 1', () => {
    expect(frameMo(mo({ shortMessage: bytes('4869') }))).toEqual({ piece: { seq: 1, dataCoding: 0, body: bytes('4869'), udhInvalid: false } });
  });

  it('reads the concatenation and its scheme from the UDH (8- and 16-bit references), else from the SAR TLVs', () => {
    expect(frameMo(mo({ esmClass: 0x40, shortMessage: bytes('050003090302' + '61') })))
      .toMatchObject({ piece: { seq: 2, body: bytes('61') }, concat: { scheme: 'udh8', ref: 9, total: 3 } });
    expect(frameMo(mo({ esmClass: 0x40, shortMessage: bytes('0608040102' + '0201' + '61') })))
      .toMatchObject({ piece: { seq: 1 }, concat: { scheme: 'udh16', ref: 0x0102, total: 2 } });
    expect(frameMo(mo({ shortMessage: bytes('61'), sar: { refNum: 300, total: 2, seq: 2 } })))
      .toMatchObject({ piece: { seq: 2 }, concat: { scheme: 'sar', ref: 300, total: 2 } });
  });

  it('a SAR sequence number outside 1..total declares nothing', () => {
    expect(frameMo(mo({ shortMessage: bytes('61'), sar: { refNum: 1, total: 2, seq: 3 } })).concat).toBeUndefined();
  });

  it('reads a UDH only when esm_class says there is one', () => {
    expect(frameMo(mo({ shortMessage: bytes('050003010201') })).piece).toMatchObject({ seq: 1, body: bytes('050003010201'), udhInvalid: false });
  });

  it('keeps the whole user data as body when the UDH is malformed, and says so', () => {
    expect(frameMo(mo({ esmClass: 0x40, shortMessage: bytes('0900034142') })))
      .toEqual({ piece: { seq: 1, dataCoding: 0, body: bytes('0900034142'), udhInvalid: true } });
    expect(frameMo(mo({ esmClass: 0x40 })).piece.udhInvalid).toBe(true);
  });

  it('reads message_payload when short_message is empty', () => {
    expect(frameMo(mo({ messagePayload: bytes('616263') })).piece.body).toEqual(bytes('616263'));
  });
});

describe('assembleMo', () => {
  it('a message of one part', () => {
    expect(assemble([mo({ shortMessage: bytes('48656c6c6f201b65') })])).toEqual({
      text: 'Hello €', parts: 1, missing: [], dataCoding: 0, problems: [],
    });
  });

  it('decodes by each upstream default alphabet and by data_coding', () => {
    expect(assemble([mo({ shortMessage: bytes('e9') })], 'latin1').text).toBe('é');
    expect(assemble([mo({ dataCoding: 8, shortMessage: bytes('0416') })]).text).toBe('Ж');
  });

  it('puts parts in sequence order, whatever order they came in', () => {
    const [p1, p2, p3] = partsOf('a'.repeat(153) + 'b'.repeat(153) + 'c', {});
    expect(assemble([p3!, p1!, p2!])).toMatchObject({ text: 'a'.repeat(153) + 'b'.repeat(153) + 'c', parts: 3, missing: [] });
  });

  it('decodes an escape sequence a sender split across two parts', () => {
    expect(assemble([
      mo({ esmClass: 0x40, shortMessage: bytes('050003090201' + '611b') }),
      mo({ esmClass: 0x40, shortMessage: bytes('050003090202' + '6562') }),
    ]).text).toBe('a€b');
  });

  it('joins a surrogate pair a sender split across two parts', () => {
    expect(assemble([
      mo({ dataCoding: 8, esmClass: 0x40, shortMessage: bytes('050003090202' + 'de00') }),
      mo({ dataCoding: 8, esmClass: 0x40, shortMessage: bytes('050003090201' + 'd83d') }),
    ])).toMatchObject({ text: '😀', problems: [] });
  });

  it('decodes Turkish parts with the shift tables their UDH names', () => {
    const text = 'Çok güzel bir şişe, İstanbul\'dan değil'.repeat(6);
    expect(assemble(partsOf(text, { nationalShift: true, messageType: 'TEXT' })).text).toBe(text);
  });

  it('an incomplete message lists the parts that never came, and keeps the text of those that did', () => {
    const [p1, , p3] = partsOf('a'.repeat(153) + 'b'.repeat(153) + 'c', {});
    expect(assemble([p1!, p3!])).toMatchObject({ text: 'a'.repeat(153) + 'c', parts: 2, missing: [2], problems: [] });
  });

  const text = fc
    .array(fc.constantFrom(...'abc{€ Ж😀“'.split(/(?:)/u)), { minLength: 1, maxLength: 600, size: 'max' })
    .map((a) => a.join(''));
  const mode = fc.constantFrom<Partial<EncodeOptions>>(
    {},
    { udhReferenceBits: 16 },
    { longMessages: 'sar' },
    { longMessages: 'payload' },
    { defaultAlphabet: 'latin1' },
  );

  it('gives back the original text from its parts in any order, with no problem', () => {
    fc.assert(
      fc.property(text, mode, fc.integer({ min: 0, max: 0xffff }), fc.infiniteStream(fc.nat()), (t, options, reference, seeds) => {
        const parts = partsOf(t, { ...options, reference });
        // Fisher–Yates with fast-check's numbers, so a failure shrinks and replays.
        const it = seeds[Symbol.iterator]();
        for (let i = parts.length - 1; i > 0; i--) {
          const j = (it.next().value ?? 0) % (i + 1);
          [parts[i], parts[j]] = [parts[j] as MoPart, parts[i] as MoPart];
        }
        expect(assemble(parts, options.defaultAlphabet ?? 'gsm7')).toMatchObject({ text: t, parts: parts.length, missing: [], problems: [] });
      }),
      { seed: 0x1b0d, numRuns: 200 },
    );
  });
});

describe('assembleMo: user data that cannot be decoded is flagged with its raw bytes', () => {
  it.each<[string, MoPart, string, string[]]>([
    ['UCS-2 of odd length', mo({ dataCoding: 8, shortMessage: bytes('00410042ff') }), 'AB\ufffd', ['UCS2_ODD_LENGTH']],
    ['UCS-2 with a lone high surrogate', mo({ dataCoding: 8, shortMessage: bytes('d83d0041') }), '\ud83dA', ['UCS2_UNPAIRED_SURROGATE']],
    ['UCS-2 with a lone low surrogate', mo({ dataCoding: 8, shortMessage: bytes('de00') }), '\ude00', ['UCS2_UNPAIRED_SURROGATE']],
    ['a UDH whose length runs past the data', mo({ esmClass: 0x40, shortMessage: bytes('0900034142') }), 'Ç@¥AB', ['UDH_INVALID']],
    ['GSM 7-bit with an octet above 0x7F', mo({ shortMessage: bytes('48e969') }), 'H\ufffdi', ['INVALID_BYTES']],
    ['GSM 7-bit ending in an escape', mo({ shortMessage: bytes('48691b') }), 'Hi', ['INVALID_BYTES']],
    ['IA5 with an octet above 0x7F', mo({ dataCoding: 1, shortMessage: bytes('48e9') }), 'Hé', ['INVALID_BYTES']],
    ['ISO-8859-8 with an unassigned octet', mo({ dataCoding: 7, shortMessage: bytes('e0a1') }), 'א\ufffd', ['INVALID_BYTES']],
    ['a bad UDH in UCS-2', mo({ dataCoding: 8, esmClass: 0x40, shortMessage: bytes('05000341') }), '\u0500\u0341', ['UDH_INVALID']],
    ['a bad UDH of odd length in UCS-2', mo({ dataCoding: 8, esmClass: 0x40, shortMessage: bytes('050003') }), '\u0500\ufffd', ['UDH_INVALID', 'UCS2_ODD_LENGTH']],
  ])('%s', (_name, part, expectedText, problems) => {
    const m = assemble([part]);
    expect(m).toMatchObject({ text: expectedText, problems });
    expect(m.raw).toEqual(frameMo(part).piece.body);
  });

  it('a part of UCS-2 whose neighbour never came leaves half a pair: flagged; the bytes are those of the parts that came', () => {
    const part = mo({ dataCoding: 8, esmClass: 0x40, shortMessage: bytes('050003090201' + '0041d83d') });
    const m = assembleMo(2, [frameMo(part).piece], 'gsm7');
    expect(m).toMatchObject({ text: 'A\ud83d', missing: [2], problems: ['UCS2_UNPAIRED_SURROGATE'] });
    expect(m.raw).toEqual(bytes('0041d83d'));
  });

  it('clean text, binary data and Latin-1 have no problem and no raw bytes', () => {
    for (const part of [mo({ shortMessage: bytes('4869') }), mo({ dataCoding: 4, shortMessage: bytes('00ff') }), mo({ dataCoding: 3, shortMessage: bytes('ff80') })]) {
      const m = assemble([part]);
      expect(m.problems).toEqual([]);
      expect(m.raw).toBeUndefined();
    }
  });

  it('never throws, and flags every replacement character it makes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 160 }), fc.constantFrom(0, 1, 3, 4, 6, 7, 8, 0xf0), fc.boolean(), (data, dataCoding, udhi) => {
        const piece: MoPiece = frameMo(mo({ dataCoding, esmClass: udhi ? 0x40 : 0, shortMessage: Buffer.from(data) })).piece;
        const m = assembleMo(1, [piece], 'gsm7');
        const sentFffd = dataCoding === 8 && [...piece.body.toString('hex').matchAll(/fffd/g)].some((h) => (h.index ?? 1) % 4 === 0);
        if (m.text.includes('\ufffd') && !sentFffd) expect(m.problems).not.toEqual([]);
        expect(m.problems.length > 0).toBe(m.raw !== undefined);
      }),
      { seed: 0x5ee7, numRuns: 500 },
    );
  });
});
