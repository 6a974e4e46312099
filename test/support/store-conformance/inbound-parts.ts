import { describe, expect, it } from 'vitest';
import { frameMo, type MoPart } from '../../../src/sms/inbound.js';
import { encodeMessage } from '../../../src/sms/segment.js';
import type { InboundPartRecord } from '../../../src/store/inbound.js';
import { encodeOptions } from '../sms.js';
import { storePerTest, type Rows, type StoreFactory } from './harness.js';

const TEXT = 'a'.repeat(153) + 'b'.repeat(153) + 'c'.repeat(10);

/**
 * The parts of `text` as a handset would send them (a UDH of 8-bit reference `ref`, or `as` says
 * otherwise), framed as deliveries frames them.
 */
function partsOf(
  text: string, ref: number, over: Partial<Omit<InboundPartRecord, 'piece' | 'scheme' | 'ref' | 'total'>> = {},
  as: { longMessages: 'udh' | 'sar'; udhReferenceBits: 8 | 16 } = { longMessages: 'udh', udhReferenceBits: 8 },
): InboundPartRecord[] {
  const encoded = encodeMessage(text, encodeOptions({ reference: ref, ...as }));
  if (!encoded.ok) throw new Error(encoded.error.message);
  return encoded.parts.map((p, i) => {
    const { piece, concat } = frameMo({ dataCoding: p.dataCoding, esmClass: p.esmClass, shortMessage: p.shortMessage, ...(p.sar ? { sar: p.sar } : {}) } satisfies MoPart);
    if (!concat) throw new Error('a concatenated message expected');
    return {
      upstream: 'up1', client: 'acme', events: true, source: '447700900001', destination: '12345', ...concat, piece,
      defaultAlphabet: 'gsm7', receivedAt: 10_000 + i, ...over,
    };
  });
}

interface InboundRow { id: number; text: string; parts: number; missing_parts: string | null; problems: string | null; raw: Buffer | null; received_at: number }

const inboundRows = (rows: Rows) => rows<InboundRow>('SELECT id, text, parts, missing_parts, problems, raw, received_at FROM inbound ORDER BY id');
const inboundEvents = async (rows: Rows) =>
  (await rows<{ payload: string }>("SELECT payload FROM outbox WHERE kind = 'inbound' ORDER BY id")).map((r) => JSON.parse(r.payload) as Record<string, unknown>);
const waiting = async (rows: Rows) => (await rows<{ seq: number }>('SELECT seq FROM inbound_parts ORDER BY seq')).map((r) => r.seq);

export function describeInboundParts(factory: StoreFactory): void {
  describe('inbound (MO) parts', () => {
    const t = storePerTest(factory);

    it('holds each part committed until the last, which stores the message and its event in its commit and removes the parts', async () => {
      const [p1, p2, p3] = partsOf(TEXT, 7);
      expect(await t.store.recordInboundPart(p3!)).toEqual({ kind: 'held', parts: 1 });
      expect(await t.store.recordInboundPart(p1!)).toEqual({ kind: 'held', parts: 2 });
      expect(await waiting(t.rows)).toEqual([1, 3]);
      expect(await inboundRows(t.rows)).toEqual([]);
      const commits = t.store.stats.commits;
      const last = await t.store.recordInboundPart(p2!);
      expect(last).toEqual({ kind: 'stored', inboundId: expect.any(Number), parts: 3 });
      expect(t.store.stats.commits - commits).toBe(1);
      expect(await waiting(t.rows)).toEqual([]);
      expect(await inboundRows(t.rows)).toEqual([{
        id: last.kind === 'stored' ? last.inboundId : -1, text: TEXT, parts: 3, missing_parts: null, problems: null, raw: null, received_at: 10_002,
      }]);
      expect(await inboundEvents(t.rows)).toEqual([{
        type: 'inbound', channel: 'sms', inboundId: last.kind === 'stored' ? last.inboundId : -1, source: '447700900001', destination: '12345',
        text: TEXT, receivedAt: new Date(10_002).toISOString(), parts: 3, missingParts: [], dataCoding: 0, malformed: false, problems: [], userData: null,
      }]);
    });

    it('parts held before a restart complete their message after it', async () => {
      const [p1, p2, p3] = partsOf(TEXT, 8);
      await t.store.recordInboundPart(p1!);
      await t.store.recordInboundPart(p2!);
      await t.reopen();
      expect(await t.store.recordInboundPart(p3!)).toMatchObject({ kind: 'stored', parts: 3 });
      expect((await inboundRows(t.rows)).map((r) => r.text)).toEqual([TEXT]);
    });

    it('a part delivered again while held, or after its message was stored, changes nothing', async () => {
      const [p1, p2, p3] = partsOf(TEXT, 9);
      await t.store.recordInboundPart(p1!);
      expect(await t.store.recordInboundPart({ ...p1!, receivedAt: 20_000 })).toEqual({ kind: 'repeat' });
      await t.store.recordInboundPart(p2!);
      await t.store.recordInboundPart(p3!);
      // The SMSC did not hear the last deliver_sm_resp (or an earlier one) and delivers again.
      for (const p of [p3!, p1!, p2!]) expect(await t.store.recordInboundPart({ ...p, receivedAt: 30_000 })).toEqual({ kind: 'repeat' });
      expect(await waiting(t.rows)).toEqual([]);
      expect(await inboundRows(t.rows)).toHaveLength(1);
      expect(await inboundEvents(t.rows)).toHaveLength(1);
    });

    it('a new message that reuses the reference with other text is a message of its own', async () => {
      const first = partsOf(TEXT, 10);
      const second = partsOf(TEXT.toUpperCase(), 10, { receivedAt: 40_000 });
      for (const p of first) await t.store.recordInboundPart(p);
      expect(await t.store.recordInboundPart(second[1]!)).toEqual({ kind: 'held', parts: 1 });
      // Its other parts are new too, once the stored message is forgotten for the other bytes.
      expect(await t.store.recordInboundPart(second[0]!)).toEqual({ kind: 'held', parts: 2 });
      expect(await t.store.recordInboundPart(second[2]!)).toMatchObject({ kind: 'stored', parts: 3 });
      expect((await inboundRows(t.rows)).map((r) => r.text)).toEqual([TEXT, TEXT.toUpperCase()]);
    });

    it('keeps messages from other senders, destinations, upstreams and part counts apart under one reference', async () => {
      const variants = [{}, { source: '447700900002' }, { destination: '54321' }, { upstream: 'up2' }];
      for (const over of variants) await t.store.recordInboundPart(partsOf(TEXT, 11, over)[0]!);
      expect(await t.store.recordInboundPart(partsOf('x'.repeat(200), 11)[0]!)).toEqual({ kind: 'held', parts: 1 });
      expect(await waiting(t.rows)).toEqual([1, 1, 1, 1, 1]);
    });

    it('keeps apart messages whose references have one number under other schemes: 8-bit UDH, 16-bit UDH, SAR', async () => {
      const texts = [TEXT, TEXT.toUpperCase(), TEXT.replaceAll('a', 'z')];
      const [udh8, udh16, sar] = [
        partsOf(texts[0]!, 21),
        partsOf(texts[1]!, 21, {}, { longMessages: 'udh', udhReferenceBits: 16 }),
        partsOf(texts[2]!, 21, {}, { longMessages: 'sar', udhReferenceBits: 8 }),
      ];
      expect([udh8, udh16, sar].map((parts) => [parts[0]!.scheme, parts[0]!.ref])).toEqual([['udh8', 21], ['udh16', 21], ['sar', 21]]);
      // The first two parts of each, interleaved: three messages of two parts each wait.
      for (let seq = 0; seq < 2; seq++) {
        for (const parts of [udh8, udh16, sar]) expect(await t.store.recordInboundPart(parts[seq]!)).toEqual({ kind: 'held', parts: seq + 1 });
      }
      expect(await waiting(t.rows)).toEqual([1, 1, 1, 2, 2, 2]);
      for (const parts of [sar, udh8, udh16]) expect(await t.store.recordInboundPart(parts[2]!)).toMatchObject({ kind: 'stored', parts: 3 });
      expect((await inboundRows(t.rows)).map((r) => r.text)).toEqual([texts[2], texts[0], texts[1]]);
      // Each remembered under its own scheme: a part delivered again is a repeat.
      for (const parts of [udh8, udh16, sar]) expect(await t.store.recordInboundPart(parts[1]!)).toEqual({ kind: 'repeat' });
      expect(await inboundRows(t.rows)).toHaveLength(3);
    });

    it('stores a message that waited too long as it is, with its missing parts and its event, across a restart', async () => {
      const [p1, , p3] = partsOf(TEXT, 12);
      await t.store.recordInboundPart(p1!);
      await t.store.recordInboundPart({ ...p3!, receivedAt: 15_000 });
      const young = partsOf(TEXT, 13, { receivedAt: 50_000 })[0]!;
      await t.store.recordInboundPart(young);
      await t.reopen();
      expect(await t.store.expireInboundParts(10_000, 100)).toEqual([]);
      const expired = await t.store.expireInboundParts(10_001, 100);
      expect(expired).toEqual([{ upstream: 'up1', inboundId: expect.any(Number), source: '447700900001', destination: '12345', parts: 2, missingParts: [2] }]);
      expect(await inboundRows(t.rows)).toEqual([{
        id: expired[0]!.inboundId, text: 'a'.repeat(153) + 'c'.repeat(10), parts: 2, missing_parts: '[2]', problems: null, raw: null, received_at: 15_000,
      }]);
      expect(await inboundEvents(t.rows)).toEqual([expect.objectContaining({ inboundId: expired[0]!.inboundId, parts: 2, missingParts: [2] })]);
      expect(await waiting(t.rows)).toEqual([1]);
      // The parts it did get are known when delivered again; the one it never got waits as a message of its own.
      expect(await t.store.recordInboundPart(p3!)).toEqual({ kind: 'repeat' });
      expect(await t.store.recordInboundPart(partsOf(TEXT, 12)[1]!)).toEqual({ kind: 'held', parts: 1 });
    });

    it('stores at most `limit` messages a call, oldest first', async () => {
      for (let ref = 1; ref <= 5; ref++) await t.store.recordInboundPart(partsOf(TEXT, ref, { receivedAt: 1_000 * (6 - ref) })[0]!);
      const first = await t.store.expireInboundParts(100_000, 2);
      expect(first).toHaveLength(2);
      expect((await inboundRows(t.rows)).map((r) => r.received_at)).toEqual([1_000, 2_000]);
      expect(await t.store.expireInboundParts(100_000, 10)).toHaveLength(3);
      expect(await t.store.expireInboundParts(100_000, 10)).toEqual([]);
    });

    it('forgets a stored message after the wait: the same part again then starts a message', async () => {
      const parts = partsOf(TEXT, 14);
      for (const p of parts) await t.store.recordInboundPart(p);
      await t.store.expireInboundParts(10_002, 10);
      expect(await t.store.recordInboundPart(parts[0]!)).toEqual({ kind: 'repeat' });
      await t.store.expireInboundParts(10_003, 10);
      expect(await t.store.recordInboundPart({ ...parts[0]!, receivedAt: 60_000 })).toEqual({ kind: 'held', parts: 1 });
    });

    it('a message with no client is stored without an event; the last part\'s route is the message\'s', async () => {
      const parts = partsOf(TEXT, 15, { client: null, events: false });
      for (const p of parts) await t.store.recordInboundPart(p);
      expect(await inboundEvents(t.rows)).toEqual([]);
      const routed = partsOf(TEXT, 16, { client: null, events: false });
      await t.store.recordInboundPart(routed[0]!);
      await t.store.recordInboundPart(routed[1]!);
      await t.store.recordInboundPart({ ...routed[2]!, client: 'acme', events: true });
      expect(await t.rows('SELECT client FROM inbound ORDER BY id')).toEqual([{ client: null }, { client: 'acme' }]);
      expect(await inboundEvents(t.rows)).toHaveLength(1);
    });

    it('a message that cannot be decoded is stored flagged, with its raw bytes, and its event says so', async () => {
      // UCS-2 parts whose joined bytes are of odd length: the second part lost an octet.
      const part = (seq: number, hex: string): InboundPartRecord => {
        const { piece } = frameMo({ dataCoding: 8, esmClass: 0x40, shortMessage: Buffer.from(`0500034402${seq.toString(16).padStart(2, '0')}${hex}`, 'hex') });
        return { ...partsOf(TEXT, 17)[0]!, piece, ref: 0x44, total: 2 };
      };
      await t.store.recordInboundPart(part(1, '00480069'));
      expect(await t.store.recordInboundPart(part(2, '0021ff'))).toMatchObject({ kind: 'stored' });
      const [row] = await inboundRows(t.rows);
      expect(row).toMatchObject({ text: 'Hi!\ufffd', problems: 'UCS2_ODD_LENGTH', missing_parts: null });
      expect(Buffer.from(row!.raw!).toString('hex')).toBe('004800690021ff');
      expect(await inboundEvents(t.rows)).toEqual([expect.objectContaining({
        text: 'Hi!\ufffd', dataCoding: 8, malformed: true, problems: ['UCS2_ODD_LENGTH'], userData: '004800690021ff',
      })]);
    });

    it('recordInbound keeps the flag and the raw bytes of a message of one part', async () => {
      await t.store.recordInbound({
        upstream: 'up1', client: 'acme', events: true, source: '1', destination: '2', text: 'Ç@¥AB', dataCoding: 0, parts: 1,
        problems: ['UDH_INVALID'], raw: Buffer.from('0900034142', 'hex'), receivedAt: 7_000,
      });
      const [row] = await inboundRows(t.rows);
      expect(row).toMatchObject({ problems: 'UDH_INVALID' });
      expect(Buffer.from(row!.raw!).toString('hex')).toBe('0900034142');
      expect(await inboundEvents(t.rows)).toEqual([expect.objectContaining({ malformed: true, problems: ['UDH_INVALID'], userData: '0900034142' })]);
    });
  });
}
