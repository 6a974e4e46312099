/**
 * The one adapter over the `smpp` package's codec. Nothing else imports `smpp`.
 *
 * The package's codec is two things: tables (every command's mandatory fields in order, every
 * TLV's tag and type) and per-type readers and writers. Both are good and are used here. Its
 * `PDU` object is not: it re-walks every property with `for…in` on each encode, guesses text
 * encodings, turns times into local `Date`s, defaults interface_version to 0x50, drops TLVs it
 * does not know on re-encode, and silently truncates a short_message that runs past the PDU.
 * So this adapter compiles each command's field table once into a plan and reads and writes
 * with the package's own type codecs, which roughly halves the CPU per submit_sm.
 * short_message and message_payload stay raw bytes; unknown TLVs are kept as raw bytes and
 * written back unchanged.
 *
 * C-Octet Strings (SMPP v3.4 §3.1) are read and written one octet per character, Latin-1, so a
 * value read from the wire is written back as it came. Before a byte of a PDU is written, every
 * C-Octet String in it is checked against `C_OCTET_SIZES`: no NUL (it would end the field and
 * the next fields would be read from the rest), no character past U+00FF (it has no octet;
 * Node's 'ascii' writer would keep its low byte, U+0100 becoming a NUL), no more characters than
 * the field's size less its NUL, and a time either empty or of the form YYMMDDhhmmsstnnp (§7.1.1).
 * A short_message holds at most 254 octets (§4.4.1). What a client may put in the fields it gives
 * is narrower still (sms/sender-id.ts).
 */
import smpp from 'smpp';
import type { CodecType } from 'smpp';
import { ErrorCode, SmppdError, isSmppdError } from '../core/errors.js';
import { TIME_LENGTH, checkShortMessageOctets, checkedCOctetSize, type COctetRule } from './field-rules.js';
import type { OtherPdu, Pdu, RawTlv, Tlvs } from './pdu.js';

/** SMPP v3.4 does not bound command_length; SMSCs and ESMEs do. 64 KiB covers message_payload. */
export const MAX_PDU_LENGTH = 65_536;

const HEADER = 16;
/** The package's length-prefixed octet string (short_message). */
const OCTETS = smpp.types['buffer'];
const CSTRING = smpp.types['cstring'];
const TLV_TYPES = smpp.types['tlv'] as Record<'int8' | 'int16' | 'int32' | 'cstring' | 'buffer', CodecType>;
const TLV_INT_WIDTH = new Map<CodecType, number>([[TLV_TYPES.int8, 1], [TLV_TYPES.int16, 2], [TLV_TYPES.int32, 4]]);

const HANDLED = new Set<string>([
  'bind_transmitter', 'bind_receiver', 'bind_transceiver',
  'bind_transmitter_resp', 'bind_receiver_resp', 'bind_transceiver_resp',
  'submit_sm', 'submit_sm_resp', 'deliver_sm', 'deliver_sm_resp', 'data_sm', 'data_sm_resp',
  'enquire_link', 'enquire_link_resp', 'unbind', 'unbind_resp', 'generic_nack',
]);

/** TLVs modelled by name in `Tlvs`: SMPP tag → our key. Every other TLV stays raw. */
const NAMED_TLVS: Record<number, keyof Omit<Tlvs, 'other'>> = {
  0x001e: 'receiptedMessageId',
  0x0427: 'messageState',
  0x0423: 'networkErrorCode',
  0x0424: 'messagePayload',
  0x020c: 'sarMsgRefNum',
  0x020e: 'sarTotalSegments',
  0x020f: 'sarSegmentSeqnum',
  0x0204: 'userMessageReference',
};
const NAMED_TLV_TAGS: Array<[keyof Omit<Tlvs, 'other'>, number, CodecType]> = Object.entries(NAMED_TLVS).map(([tag, key]) => {
  const def = smpp.tlvsById[Number(tag)];
  if (!def) throw new Error(`smpp codec lacks TLV 0x${Number(tag).toString(16)}`);
  return [key, Number(tag), def.type];
});

/**
 * SMPP v3.4 §4: the size, NUL included ("Var. max 21"), of each C-Octet String field of every
 * command smppd encodes. Every C-Octet String of the codec's tables for these commands must be
 * here: a plan is not built without it (and all plans are built when this module loads).
 */
const BIND_SIZES = { system_id: 16, password: 9, system_type: 13, address_range: 41 }; // §4.1.1, §4.1.3, §4.1.5
const BIND_RESP_SIZES = { system_id: 16 }; // §4.1.2, §4.1.4, §4.1.6
const C_OCTET_SIZES: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  bind_transmitter: BIND_SIZES,
  bind_receiver: BIND_SIZES,
  bind_transceiver: BIND_SIZES,
  bind_transmitter_resp: BIND_RESP_SIZES,
  bind_receiver_resp: BIND_RESP_SIZES,
  bind_transceiver_resp: BIND_RESP_SIZES,
  // §4.4.1; the times are 17 with 16 characters, or 1 when empty (§7.1).
  submit_sm: { service_type: 6, source_addr: 21, destination_addr: 21, schedule_delivery_time: 17, validity_period: 17 },
  submit_sm_resp: { message_id: 65 }, // §4.4.2
  // §4.6.1: schedule_delivery_time and validity_period are unused in deliver_sm and set to NULL.
  deliver_sm: { service_type: 6, source_addr: 21, destination_addr: 21, schedule_delivery_time: 1, validity_period: 1 },
  deliver_sm_resp: { message_id: 1 }, // §4.6.2: unused, set to NULL
  data_sm: { service_type: 6, source_addr: 65, destination_addr: 65 }, // §4.7.1
  data_sm_resp: { message_id: 65 }, // §4.7.2
};
/** SMPP v3.4 §7.1: the times, checked by their form as well (field-rules.ts). */
const TIME_FIELDS = new Set(['schedule_delivery_time', 'validity_period']);
/** Named TLVs that are C-Octet Strings: §5.3.2.12 receipted_message_id, 1–65 octets with the NUL. */
const TLV_C_OCTET_RULES: Readonly<Partial<Record<keyof Omit<Tlvs, 'other'>, COctetRule>>> = {
  receiptedMessageId: { snake: 'receipted_message_id', maxOctets: 65, time: false },
};

interface Field {
  /** The SMPP name, for messages. */
  snake: string;
  camel: string;
  type: CodecType;
  fallback: unknown;
  /** Set for a C-Octet String: checked and written here, not by the package. */
  cOctet?: COctetRule;
}

interface Plan {
  commandId: number;
  fields: Field[];
}

const plans = new Map<string, Plan>();

function camel(snake: string): string {
  return snake.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

function planFor(command: string): Plan {
  let plan = plans.get(command);
  if (!plan) {
    const def = smpp.commands[command];
    if (!def) throw new SmppdError(ErrorCode.INTERNAL, `smpp codec lacks command ${command}`);
    const fields = Object.entries(def.params ?? {}).map(([snake, p]): Field => {
      const field: Field = {
        snake,
        camel: camel(snake),
        type: p.type,
        // The package's defaults, except data_coding (its null means "guess"): 0, explicit.
        fallback: snake === 'data_coding' ? 0 : (p.default ?? p.type.default ?? 0),
      };
      if (p.type !== CSTRING) return field;
      const maxOctets = C_OCTET_SIZES[command]?.[snake];
      if (maxOctets === undefined) throw new SmppdError(ErrorCode.INTERNAL, `no SMPP v3.4 size for the C-Octet String ${command}.${snake}`);
      return { ...field, cOctet: { snake, maxOctets, time: TIME_FIELDS.has(snake) && maxOctets === TIME_LENGTH + 1 } };
    });
    plan = { commandId: def.id, fields };
    plans.set(command, plan);
  }
  return plan;
}

// Built now: a C-Octet String without its size fails at start, not at the first PDU of its command.
for (const command of HANDLED) planFor(command);

/** Every C-Octet String field of every command smppd encodes, from the codec's tables: for tests that walk them all. */
export function cOctetFields(): Array<{ command: string; field: string; snake: string; maxOctets: number; time: boolean }> {
  return [...HANDLED].flatMap((command) => planFor(command).fields.flatMap((f) => (f.cOctet ? [{ command, field: f.camel, ...f.cOctet }] : [])));
}

/** The named TLVs that are C-Octet Strings, with their size NUL included (for the same tests). */
export function cOctetTlvs(): Array<{ key: keyof Omit<Tlvs, 'other'>; maxOctets: number }> {
  return NAMED_TLV_TAGS.filter(([, , type]) => type === TLV_TYPES.cstring).map(([key]) => {
    const rule = TLV_C_OCTET_RULES[key];
    if (rule === undefined) throw new SmppdError(ErrorCode.INTERNAL, `no SMPP v3.4 size for the TLV ${key}`);
    return { key, maxOctets: rule.maxOctets };
  });
}

// ---------------------------------------------------------------------------------------------
// Encoding

/** Whether `e` is encodePdu's refusal (PDU_FIELD_INVALID, PDU_MALFORMED): that PDU can never be written, and trying again cannot help. */
export function isUnencodable(e: unknown): e is SmppdError {
  return isSmppdError(e, ErrorCode.PDU_FIELD_INVALID) || isSmppdError(e, ErrorCode.PDU_MALFORMED);
}

/**
 * Encodes one PDU to wire bytes. Throws SmppdError, nothing written: PDU_FIELD_INVALID when a
 * C-Octet String breaks its rule (see the top of this file), PDU_MALFORMED on any other
 * unencodable value.
 */
export function encodePdu(pdu: Pdu): Buffer {
  if (pdu.command === 'other') return header(HEADER, pdu.commandId, pdu.commandStatus, pdu.sequenceNumber);
  const plan = planFor(pdu.command);
  // SMPP v3.4 §4: a response whose command_status is not 0 carries no body (so does the codec).
  if (pdu.commandStatus !== 0 && (plan.commandId & 0x80000000) !== 0) {
    return header(HEADER, plan.commandId, pdu.commandStatus, pdu.sequenceNumber);
  }
  const src = pdu as unknown as Record<string, unknown>;
  try {
    const values = plan.fields.map((f) => src[f.camel] ?? f.fallback);
    const tlvs = (src['tlvs'] as Tlvs | undefined);
    let length = HEADER;
    for (let i = 0; i < values.length; i++) {
      const f = plan.fields[i]!;
      if (f.cOctet) length += checkedCOctetSize(pdu.command, f.cOctet, values[i]);
      else {
        const size = f.type.size(values[i]);
        if (f.type === OCTETS) checkShortMessageOctets(pdu.command, f.snake, size - 1);
        length += size;
      }
    }
    const named = tlvs ? NAMED_TLV_TAGS.filter(([key]) => tlvs[key] !== undefined) : [];
    for (const [key, , type] of named) {
      const rule = TLV_C_OCTET_RULES[key];
      length += 4 + (rule === undefined ? type.size(tlvs![key]) : checkedCOctetSize(pdu.command, rule, tlvs![key]));
    }
    for (const raw of tlvs?.other ?? []) length += 4 + raw.value.length;
    if (length > MAX_PDU_LENGTH) throw new Error(`${length} octets is over the maximum of ${MAX_PDU_LENGTH}`);

    const out = header(length, plan.commandId, pdu.commandStatus, pdu.sequenceNumber);
    let offset = HEADER;
    for (let i = 0; i < values.length; i++) {
      const { type, cOctet } = plan.fields[i]!;
      if (cOctet) {
        offset = writeCOctets(out, values[i] as string, offset);
        continue;
      }
      type.write(values[i], out, offset);
      offset += type.size(values[i]);
    }
    for (const [key, tag, type] of named) {
      const value = tlvs![key];
      const size = type.size(value);
      out.writeUInt16BE(tag, offset);
      out.writeUInt16BE(size, offset + 2);
      if (TLV_C_OCTET_RULES[key] === undefined) type.write(value, out, offset + 4);
      else writeCOctets(out, value as string, offset + 4);
      offset += 4 + size;
    }
    for (const raw of tlvs?.other ?? []) {
      out.writeUInt16BE(raw.tag, offset);
      out.writeUInt16BE(raw.value.length, offset + 2);
      raw.value.copy(out, offset + 4);
      offset += 4 + raw.value.length;
    }
    return out;
  } catch (e) {
    if (isSmppdError(e)) throw e;
    throw new SmppdError(ErrorCode.PDU_MALFORMED, `cannot encode ${pdu.command}: ${(e as Error).message}`, undefined, { cause: e });
  }
}

/** Writes a checked C-Octet String (one octet per character, then NUL); returns the offset after it. */
function writeCOctets(out: Buffer, value: string, offset: number): number {
  for (let i = 0; i < value.length; i++) out[offset + i] = value.charCodeAt(i);
  out[offset + value.length] = 0;
  return offset + value.length + 1;
}

function header(length: number, commandId: number, status: number, sequence: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  writeHeader(out, commandId, status, sequence);
  return out;
}

/** Writes the 16-byte header (SMPP v3.4 §3.2) of the PDU that fills `out`: command_length is its length. */
export function writeHeader(out: Buffer, commandId: number, status: number, sequence: number): void {
  out.writeUInt32BE(out.length, 0);
  out.writeUInt32BE(commandId >>> 0, 4);
  out.writeUInt32BE(status >>> 0, 8);
  out.writeUInt32BE(sequence >>> 0, 12);
}

// ---------------------------------------------------------------------------------------------
// Decoding

export type DecodeResult =
  | { ok: true; pdu: Pdu }
  /**
   * The header was readable but the body was not: a request gets generic_nack with this
   * sequence number and `nackStatus` (ESME_RINVCMDLEN when the body does not fit command_length,
   * ESME_RSYSERR for anything else).
   */
  | { ok: false; commandId: number; sequenceNumber: number; reason: string; nackStatus: number };

const ESME_RINVCMDLEN = 0x02;
const ESME_RSYSERR = 0x08;

/**
 * Decodes one complete frame (command_length already checked by `FrameReader`). Never throws:
 * a bad body is a value the session answers with generic_nack (SMPP v3.4 §2.8).
 */
export function decodePdu(frame: Buffer): DecodeResult {
  const length = frame.readUInt32BE(0);
  const commandId = frame.readUInt32BE(4);
  const commandStatus = frame.readUInt32BE(8);
  const sequenceNumber = frame.readUInt32BE(12);
  const def = smpp.commandsById[commandId];
  if (!def || !HANDLED.has(def.command)) {
    const other: OtherPdu = { command: 'other', commandId, commandStatus, sequenceNumber, name: def?.command ?? 'unknown' };
    return { ok: true, pdu: other };
  }
  const bad = (reason: string, nackStatus = ESME_RINVCMDLEN): DecodeResult => ({ ok: false, commandId, sequenceNumber, reason, nackStatus });
  const isResponse = (commandId & 0x80000000) !== 0;
  const plan = planFor(def.command);
  const out: Record<string, unknown> = { command: def.command, commandStatus, sequenceNumber };
  let offset = HEADER;
  try {
    for (const f of plan.fields) {
      if (offset >= length) {
        // A response cut short (header-only on error, as v3.4 allows) takes the defaults;
        // a request must carry every mandatory field.
        if (!isResponse) return bad(`the body ends before ${f.camel}`);
        out[f.camel] = f.fallback;
        continue;
      }
      if (f.type === CSTRING) {
        // The package reads C-strings as 'ascii', which drops the high bit; the wire is octets.
        const end = frame.indexOf(0, offset);
        if (end < 0 || end >= length) return bad(`${f.camel} has no terminating NUL inside the PDU`);
        out[f.camel] = frame.toString('latin1', offset, end);
        offset = end + 1;
        continue;
      }
      // The package's octet-string reader slices silently past the end: check the declared length.
      if (f.type === OCTETS && offset + 1 + frame.readUInt8(offset) > length) return bad(`${f.camel} runs past the end of the PDU`);
      const value = f.type.read(frame, offset);
      offset += f.type.size(value);
      if (offset > length) return bad(`${f.camel} runs past the end of the PDU`);
      out[f.camel] = value;
    }
    let tlvs: Tlvs | undefined;
    while (offset < length) {
      if (offset + 4 > length) return bad(`${length - offset} stray octets after the last optional parameter`);
      const tag = frame.readUInt16BE(offset);
      const size = frame.readUInt16BE(offset + 2);
      const start = offset + 4;
      offset = start + size;
      if (offset > length) return bad(`optional parameter 0x${tag.toString(16).padStart(4, '0')} runs past the end of the PDU`);
      tlvs ??= {};
      const key = NAMED_TLVS[tag];
      const value = key === undefined ? undefined : namedTlvValue(smpp.tlvsById[tag]!.type, frame.subarray(start, offset));
      if (key !== undefined && value !== undefined) {
        (tlvs as Record<string, unknown>)[key] = value;
      } else {
        const raw: RawTlv = { tag, value: frame.subarray(start, offset) };
        (tlvs.other ??= []).push(raw);
      }
    }
    if (tlvs) out['tlvs'] = tlvs;
  } catch (e) {
    return bad((e as Error).message, e instanceof RangeError ? ESME_RINVCMDLEN : ESME_RSYSERR);
  }
  return { ok: true, pdu: out as unknown as Pdu };
}

/**
 * A named TLV's value read within its own length (the package's readers ignore the length and
 * run into the next TLV): a C-string up to its NUL or its end (some SMSCs leave the NUL out),
 * a number only at its width. undefined: a number of the wrong width, kept raw instead.
 */
function namedTlvValue(type: CodecType, value: Buffer): string | number | Buffer | undefined {
  if (type === TLV_TYPES.cstring) {
    const nul = value.indexOf(0);
    return value.toString('latin1', 0, nul < 0 ? value.length : nul);
  }
  const width = TLV_INT_WIDTH.get(type);
  if (width !== undefined) return value.length === width ? value.readUIntBE(0, width) : undefined;
  return Buffer.from(value);
}

/** The SMPP name of a command id, for logs ('unknown' when not a v3.4 command). */
export function commandName(commandId: number): string {
  return smpp.commandsById[commandId]?.command ?? 'unknown';
}
