/**
 * Hostile SMPP byte streams for property tests of a PDU reader over a real socket: valid PDUs
 * (built by hand with `PduBytes`, not by the codec under test) with flipped bytes, wrong or huge
 * command_length, truncated bodies, garbage TLVs and unknown command ids; and what the reader
 * must answer to each, per SMPP v3.4 §2.8 and STYLE.md: a bad command_length resets the link,
 * a request with a bad body gets generic_nack under its own sequence number, a response is never
 * answered.
 */
import fc from 'fast-check';
import { PduBytes } from './pdu-bytes.js';

/** SMPP v3.4 §3.2. */
export const HEADER = 16;
/** smppd's and the simulator's limit (`MAX_PDU_LENGTH`); a longer command_length resets the link. */
export const MAX_LENGTH = 65_536;
export const GENERIC_NACK = 0x80000000;
export const ENQUIRE_LINK = 0x00000015;
export const UNBIND = 0x00000006;

/** command_status a generic_nack may carry here: ESME_RINVCMDLEN, ESME_RINVCMDID, ESME_RSYSERR, ESME_RINVBNDSTS. */
export const NACK_STATUSES: ReadonlySet<number> = new Set([0x02, 0x03, 0x08, 0x04]);

/** Every command id of SMPP v3.4 (§5.1.2.1); another id is answered generic_nack ESME_RINVCMDID. */
export const V34_COMMANDS: ReadonlySet<number> = new Set([
  0x80000000, 0x00000001, 0x80000001, 0x00000002, 0x80000002, 0x00000003, 0x80000003, 0x00000004, 0x80000004,
  0x00000005, 0x80000005, 0x00000006, 0x80000006, 0x00000007, 0x80000007, 0x00000008, 0x80000008, 0x00000009,
  0x80000009, 0x0000000b, 0x00000015, 0x80000015, 0x00000021, 0x80000021, 0x00000102, 0x00000103, 0x80000103,
]);

export const isResponse = (commandId: number): boolean => (commandId & 0x80000000) !== 0;

/** short_message-carrying PDUs (submit_sm and deliver_sm share the layout, SMPP v3.4 §4.4.1 / §4.6.1). */
function smPdu(commandId: number, esmClass: number, text: Buffer): PduBytes {
  return new PduBytes(commandId, 0)
    .cstr('').u8(1).u8(1).cstr('4915112345678')
    .u8(0).u8(0).cstr('smppd')
    .u8(esmClass).u8(0).u8(0)
    .cstr('').cstr('')
    .u8(0).u8(0).u8(0).u8(0)
    .sm(text);
}

const hex = (maxLength: number): fc.Arbitrary<string> => fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), maxLength });

const receiptText = fc.tuple(hex(12), fc.constantFrom('DELIVRD', 'UNDELIV', 'EXPIRED', 'BUFFRED', ''))
  .map(([id, stat]) => Buffer.from(`id:${id} sub:001 dlvrd:001 submit date:2611221230 done date:2611221231 stat:${stat} err:000 text:x`, 'latin1'));

/** A well-formed PDU an SMSC might send (or should not), sequence number 0 (set later). */
const template: fc.Arbitrary<Buffer> = fc.oneof(
  // deliver_sm: a receipt (text, or TLVs), an MO message (text, UCS-2, with a UDH)
  receiptText.map((t) => smPdu(0x00000005, 0x04, t).build()),
  fc.tuple(receiptText, hex(10)).map(([t, id]) =>
    smPdu(0x00000005, 0x04, t).tlv(0x001e, Buffer.from(`${id}\0`, 'latin1')).tlv(0x0427, Buffer.from([2])).build()),
  fc.uint8Array({ maxLength: 160 }).map((a) => smPdu(0x00000005, 0x00, Buffer.from(a)).build()),
  fc.uint8Array({ maxLength: 40 }).map((a) => smPdu(0x00000005, 0x40, Buffer.concat([Buffer.from([5, 0, 3, 7, 2, 1]), Buffer.from(a)])).build()),
  // data_sm with message_payload (SMPP v3.4 §4.7.1)
  fc.uint8Array({ maxLength: 200 }).map((a) => new PduBytes(0x00000103, 0)
    .cstr('').u8(1).u8(1).cstr('4915112345678').u8(0).u8(0).cstr('smppd').u8(0).u8(0).u8(0)
    .tlv(0x0424, Buffer.from(a)).build()),
  fc.constant(new PduBytes(ENQUIRE_LINK, 0).build()),
  // What an SMSC does not send to an ESME, and responses to nothing smppd sent
  fc.uint8Array({ maxLength: 20 }).map((a) => smPdu(0x00000004, 0, Buffer.from(a)).build()),
  fc.constant(new PduBytes(0x00000009, 0).cstr('esme').cstr('pw').cstr('').u8(0x34).u8(0).u8(0).cstr('').build()),
  fc.constantFrom(0x00000003, 0x0000000b, 0x00000102, 0x00000021).map((id) => new PduBytes(id, 0).cstr('x').build()),
  hex(16).map((id) => new PduBytes(0x80000004, 0).cstr(id).build()),
  fc.constantFrom(0x80000005, 0x80000103, 0x80000015, 0x80000009, 0x80000006).map((id) => new PduBytes(id, 0).build()),
  fc.integer({ min: 0, max: 0xff }).map((status) => new PduBytes(GENERIC_NACK, 0, status).build()),
  // unknown command ids, requests and responses, with a body
  fc.tuple(fc.integer({ min: 0, max: 0xffffffff }), fc.uint8Array({ maxLength: 30 }))
    .filter(([id]) => !V34_COMMANDS.has(id))
    .map(([id, body]) => new PduBytes(id, 0).raw(Buffer.from(body)).build()),
  // an unbind, now and then: the link ends after its unbind_resp
  fc.constant(new PduBytes(UNBIND, 0).build()),
);

/** One edit of a frame. */
const edit = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('flipBody' as const), at: fc.nat(), value: fc.integer({ min: 1, max: 255 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('flipAny' as const), at: fc.nat(), value: fc.integer({ min: 1, max: 255 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('truncate' as const), keep: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('declare' as const), delta: fc.integer({ min: -40, max: 40 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('length' as const), value: fc.constantFrom(0, 1, 4, 15, 16, MAX_LENGTH + 1, 1_000_000, 0x7fffffff, 0xffffffff) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('append' as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 24 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('command' as const), id: fc.integer({ min: 0, max: 0xffffffff }) }) },
);
type Edit = typeof edit extends fc.Arbitrary<infer E> ? E : never;

function applyEdit(frame: Buffer, e: Edit): Buffer {
  const out = Buffer.from(frame);
  switch (e.kind) {
    case 'flipBody':
      if (out.length > HEADER) out[HEADER + (e.at % (out.length - HEADER))]! ^= e.value;
      return out;
    case 'flipAny':
      out[e.at % out.length]! ^= e.value;
      return out;
    case 'truncate': {
      // Cut the body and say so in command_length: the mandatory fields run short.
      const cut = out.subarray(0, HEADER + (e.keep % (out.length - HEADER + 1)));
      cut.writeUInt32BE(cut.length, 0);
      return Buffer.from(cut);
    }
    case 'declare':
      // command_length not the size sent: the stream goes out of step.
      out.writeUInt32BE(Math.min(0xffffffff, Math.max(0, out.readUInt32BE(0) + e.delta)), 0);
      return out;
    case 'length':
      out.writeUInt32BE(e.value >>> 0, 0);
      return out;
    case 'append': {
      const longer = Buffer.concat([out, Buffer.from(e.bytes)]);
      longer.writeUInt32BE((out.readUInt32BE(0) + e.bytes.length) >>> 0, 0);
      return longer;
    }
    case 'command':
      out.writeUInt32BE(e.id >>> 0, 4);
      return out;
  }
}

/** A hostile frame: a template with up to three edits, or random bytes behind a plausible header. */
export const hostileFrame: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 2, arbitrary: template },
  { weight: 6, arbitrary: fc.tuple(template, fc.array(edit, { minLength: 1, maxLength: 3 })).map(([t, edits]) => edits.reduce(applyEdit, t)) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom(0x00000005, 0x00000103, 0x00000015, 0x00000004, 0x80000004), fc.uint8Array({ maxLength: 80 }))
      .map(([id, body]) => new PduBytes(id, 0).raw(Buffer.from(body)).build()),
  },
);

/** A case: one to five hostile frames written together. */
export const hostileStream = fc.array(hostileFrame, { minLength: 1, maxLength: 5 });

/** Gives each frame of a case a sequence number of its own, from `next` (before any edit moved the frames). */
export function numbered(frames: readonly Buffer[], next: () => number): Buffer {
  return Buffer.concat(frames.map((f) => {
    const out = Buffer.from(f);
    if (out.length >= HEADER) out.writeUInt32BE(next(), 12);
    return out;
  }));
}

export interface FramedStream {
  /** The whole PDUs the reader sees, in order, up to a bad command_length. */
  frames: Array<{ commandId: number; sequenceNumber: number; status: number }>;
  /** A command_length below 16 or above the maximum: the link must be reset. */
  badLength: boolean;
  /** Bytes left that do not make a whole PDU yet (the reader waits for more). */
  partial: boolean;
}

/**
 * How a reader that frames by command_length (SMPP v3.4 §3.2) splits `stream`. Written here, apart
 * from the FrameReader under test, so the two cannot share a mistake.
 */
export function frameStream(stream: Buffer): FramedStream {
  const frames: FramedStream['frames'] = [];
  let offset = 0;
  while (stream.length - offset >= 4) {
    const length = stream.readUInt32BE(offset);
    if (length < HEADER || length > MAX_LENGTH) return { frames, badLength: true, partial: false };
    if (stream.length - offset < length) break;
    frames.push({ commandId: stream.readUInt32BE(offset + 4), status: stream.readUInt32BE(offset + 8), sequenceNumber: stream.readUInt32BE(offset + 12) });
    offset += length;
  }
  return { frames, badLength: false, partial: offset < stream.length };
}

/** Splits what the reader under test wrote back (well-formed: it is not the side being fuzzed). */
export class AnswerReader {
  #pending = Buffer.alloc(0);

  push(chunk: Buffer): Array<{ commandId: number; status: number; sequenceNumber: number; body: Buffer }> {
    this.#pending = Buffer.concat([this.#pending, chunk]);
    const out = [];
    while (this.#pending.length >= HEADER) {
      const length = this.#pending.readUInt32BE(0);
      if (this.#pending.length < length) break;
      const f = this.#pending.subarray(0, length);
      out.push({ commandId: f.readUInt32BE(4), status: f.readUInt32BE(8), sequenceNumber: f.readUInt32BE(12), body: Buffer.from(f.subarray(HEADER)) });
      this.#pending = this.#pending.subarray(length);
    }
    return out;
  }
}
