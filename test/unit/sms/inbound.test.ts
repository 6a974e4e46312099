import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MoReassembler, type MoMessage, type MoPart } from '../../../src/sms/inbound.js';
import { encodeMessage, type EncodeOptions } from '../../../src/sms/segment.js';
import { encodeOptions } from '../../support/sms.js';

const bytes = (h: string): Buffer => Buffer.from(h, 'hex');
const mo = (over: Partial<MoPart>): MoPart => ({
  source: '447700900001',
  destination: '447700900999',
  dataCoding: 0,
  esmClass: 0,
  shortMessage: Buffer.alloc(0),
  receivedAt: 1000,
  ...over,
});

const BASE: EncodeOptions = encodeOptions({ reference: 7 });

/** The submit_sm parts of `text`, as a handset's MO parts would arrive. */
function partsOf(text: string, options: Partial<EncodeOptions>, source = '447700900001'): MoPart[] {
  const r = encodeMessage(text, { ...BASE, ...options });
  if (!r.ok) throw new Error(r.error.message);
  return r.parts.map((p, i) =>
    mo({
      source,
      dataCoding: p.dataCoding,
      esmClass: p.esmClass,
      shortMessage: p.shortMessage,
      ...(p.sar ? { sar: p.sar } : {}),
      ...(p.messagePayload ? { messagePayload: p.messagePayload } : {}),
      receivedAt: 1000 + i,
    }),
  );
}

describe('MoReassembler', () => {
  it('completes a message of one part at once', () => {
    const r = new MoReassembler({ defaultAlphabet: 'gsm7' });
    expect(r.add(mo({ shortMessage: bytes('48656c6c6f201b65') }))).toEqual({
      source: '447700900001',
      destination: '447700900999',
      text: 'Hello €',
      parts: 1,
      total: 1,
      complete: true,
      missing: [],
      dataCoding: 0,
      receivedAt: 1000,
    });
    expect(r.pending).toBe(0);
  });

  it('decodes by each upstream default alphabet and by data_coding', () => {
    expect(new MoReassembler({ defaultAlphabet: 'latin1' }).add(mo({ shortMessage: bytes('e9') }))?.text).toBe('é');
    expect(new MoReassembler({ defaultAlphabet: 'gsm7' }).add(mo({ dataCoding: 8, shortMessage: bytes('0416') }))?.text).toBe('Ж');
  });

  it('reads a UDH only when esm_class says there is one', () => {
    const r = new MoReassembler({ defaultAlphabet: 'latin1' });
    expect(r.add(mo({ shortMessage: bytes('050003010201') }))?.text).toBe('\x05\x00\x03\x01\x02\x01');
    expect(r.pending).toBe(0);
  });

  it('keeps the whole user data as text when the UDH is malformed', () => {
    const r = new MoReassembler({ defaultAlphabet: 'latin1' });
    expect(r.add(mo({ esmClass: 0x40, shortMessage: bytes('0900034142') }))?.text).toBe('\x09\x00\x03AB');
  });

  it('reads message_payload when short_message is empty', () => {
    const r = new MoReassembler({ defaultAlphabet: 'gsm7' });
    expect(r.add(mo({ messagePayload: bytes('616263') }))?.text).toBe('abc');
  });

  it('reassembles UDH parts in any order, ignoring duplicates', () => {
    const r = new MoReassembler({ defaultAlphabet: 'gsm7' });
    const [p1, p2, p3] = partsOf('a'.repeat(400), {});
    if (!p1 || !p2 || !p3) throw new Error('three parts expected');
    expect(r.add(p3)).toBeUndefined();
    expect(r.add(p1)).toBeUndefined();
    expect(r.add(p3)).toBeUndefined();
    expect(r.pending).toBe(1);
    const done = r.add(p2);
    expect(done).toMatchObject({ text: 'a'.repeat(400), parts: 3, total: 3, complete: true, receivedAt: 1000 });
    expect(r.pending).toBe(0);
  });

  it('ignores a part delivered again after its message completed, but not a new message reusing the reference', () => {
    const r = new MoReassembler({ defaultAlphabet: 'gsm7' });
    const [p1, p2] = partsOf('a'.repeat(200), {});
    r.add(p1 as MoPart);
    expect(r.add(p2 as MoPart)?.text).toBe('a'.repeat(200));
    expect(r.add({ ...(p1 as MoPart), receivedAt: 3000 })).toBeUndefined();
    expect(r.pending).toBe(0);
    const [n1, n2] = partsOf('b'.repeat(200), {});
    expect(r.add(n2 as MoPart)).toBeUndefined();
    expect(r.add(n1 as MoPart)?.text).toBe('b'.repeat(200));
    expect(r.expire(100_000, 60_000)).toEqual([]);
    // Past maxAge the memory is gone: the same part again starts a message.
    expect(r.add(p1 as MoPart)).toBeUndefined();
    expect(r.pending).toBe(1);
  });

  it('keeps messages from different senders apart even with the same reference', () => {
    const r = new MoReassembler({ defaultAlphabet: 'gsm7' });
    const a = partsOf('x'.repeat(200), {}, '111');
    const b = partsOf('y'.repeat(200), {}, '222');
    expect(r.add(a[0] as MoPart)).toBeUndefined();
    expect(r.add(b[1] as MoPart)).toBeUndefined();
    expect(r.add(b[0] as MoPart)?.text).toBe('y'.repeat(200));
    expect(r.add(a[1] as MoPart)?.text).toBe('x'.repeat(200));
  });

  it('decodes an escape sequence a sender split across two parts', () => {
    const r = new MoReassembler({ defaultAlphabet: 'gsm7' });
    r.add(mo({ esmClass: 0x40, shortMessage: bytes('050003090201' + '611b') }));
    expect(r.add(mo({ esmClass: 0x40, shortMessage: bytes('050003090202' + '6562') }))?.text).toBe('a€b');
  });

  it('joins a surrogate pair a sender split across two parts', () => {
    const r = new MoReassembler({ defaultAlphabet: 'gsm7' });
    r.add(mo({ dataCoding: 8, esmClass: 0x40, shortMessage: bytes('050003090202' + 'de00') }));
    expect(r.add(mo({ dataCoding: 8, esmClass: 0x40, shortMessage: bytes('050003090201' + 'd83d') }))?.text).toBe('😀');
  });

  it('decodes Turkish parts with the shift tables their UDH names', () => {
    const r = new MoReassembler({ defaultAlphabet: 'gsm7' });
    const text = 'Çok güzel bir şişe, İstanbul’dan değil'.replace('’', "'").repeat(6);
    let done: MoMessage | undefined;
    for (const p of partsOf(text, { nationalShift: true, messageType: 'TEXT' })) done = r.add(p) ?? done;
    expect(done?.text).toBe(text);
  });

  it('gives up on an incomplete message at maxAge and delivers what arrived', () => {
    const r = new MoReassembler({ defaultAlphabet: 'gsm7' });
    const [p1, , p3] = partsOf('a'.repeat(153) + 'b'.repeat(153) + 'c', {});
    r.add({ ...(p1 as MoPart), receivedAt: 1000 });
    r.add({ ...(p3 as MoPart), receivedAt: 5000 });
    const young = partsOf('z'.repeat(200), {}, '333')[0] as MoPart;
    r.add({ ...young, receivedAt: 2000 });
    expect(r.expire(60_999, 60_000)).toEqual([]);
    const expired = r.expire(61_000, 60_000);
    expect(expired).toEqual([
      expect.objectContaining({ text: 'a'.repeat(153) + 'c', parts: 2, total: 3, complete: false, missing: [2], receivedAt: 1000 }),
    ]);
    expect(r.pending).toBe(1);
    expect(r.expire(62_000, 60_000).map((m) => m.source)).toEqual(['333']);
    expect(r.pending).toBe(0);
  });

  it('holds at most maxGroups incomplete messages, giving the oldest up to the next expire', () => {
    const r = new MoReassembler({ defaultAlphabet: 'gsm7', maxGroups: 2 });
    for (const source of ['1', '2', '3']) r.add(partsOf('q'.repeat(200), {}, source)[0] as MoPart);
    expect(r.pending).toBe(2);
    expect(r.expire(1000, 60_000)).toEqual([expect.objectContaining({ source: '1', complete: false, missing: [2] })]);
    expect(r.expire(1000, 60_000)).toEqual([]);
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

  it('reassembles shuffled and duplicated parts to the original text, completing once', () => {
    fc.assert(
      fc.property(text, mode, fc.integer({ min: 0, max: 0xffff }), fc.infiniteStream(fc.nat()), (t, options, reference, seeds) => {
        const parts = partsOf(t, { ...options, reference });
        // A message of one part has nothing to reassemble: each delivery of it is a message.
        const again = parts.length > 1 ? parts.filter((_, i) => i % 2 === 0) : [];
        const arrivals = [...parts, ...again];
        // Fisher–Yates with fast-check's numbers, so a failure shrinks and replays.
        const it = seeds[Symbol.iterator]();
        for (let i = arrivals.length - 1; i > 0; i--) {
          const j = (it.next().value ?? 0) % (i + 1);
          [arrivals[i], arrivals[j]] = [arrivals[j] as MoPart, arrivals[i] as MoPart];
        }
        const r = new MoReassembler({ defaultAlphabet: options.defaultAlphabet ?? 'gsm7' });
        const done: MoMessage[] = [];
        const seen = new Set<MoPart>();
        for (const p of arrivals) {
          const m = r.add(p);
          seen.add(p);
          // Nothing before the last missing part, nothing from duplicates after it.
          if (m) {
            expect(seen.size).toBe(parts.length);
            done.push(m);
          }
        }
        expect(done).toHaveLength(1);
        expect(done[0]).toMatchObject({ text: t, parts: parts.length, total: parts.length, complete: true });
        expect(r.pending).toBe(0);
      }),
    );
  });
});
