/**
 * The one adapter over the `smpp` package's table-driven codec. Nothing else imports `smpp`.
 *
 * What this adapter changes about the codec, and why:
 * - short_message and message_payload stay raw bytes both ways. The codec would otherwise guess
 *   an encoding and decode text with its own tables; smppd encodes per upstream itself.
 * - time fields stay the strings on the wire (the codec turns them into local Dates).
 * - interface_version is always given (the codec's default is 0x50, SMPP 5.0).
 * - TLVs the codec does not know are registered on first sight, so re-encoding keeps them.
 */
import smpp from 'smpp';
import type { CommandDef, PDU as CodecPdu } from 'smpp';
import { ErrorCode, SmppdError } from '../core/errors.js';
import type { OtherPdu, Pdu, RawTlv, Tlvs } from './pdu.js';

/** SMPP v3.4 does not bound command_length; SMSCs and ESMEs do. 64 KiB covers message_payload. */
export const MAX_PDU_LENGTH = 65_536;
smpp.PDU.maxLength = MAX_PDU_LENGTH;

const HANDLED = new Set<string>([
  'bind_transmitter', 'bind_receiver', 'bind_transceiver',
  'bind_transmitter_resp', 'bind_receiver_resp', 'bind_transceiver_resp',
  'submit_sm', 'submit_sm_resp', 'deliver_sm', 'deliver_sm_resp', 'data_sm', 'data_sm_resp',
  'enquire_link', 'enquire_link_resp', 'unbind', 'unbind_resp', 'generic_nack',
]);

/** TLVs modelled by name in `Tlvs`: codec tag → our key. */
const NAMED_TLVS: Record<string, keyof Omit<Tlvs, 'other'>> = {
  receipted_message_id: 'receiptedMessageId',
  message_state: 'messageState',
  network_error_code: 'networkErrorCode',
  message_payload: 'messagePayload',
  sar_msg_ref_num: 'sarMsgRefNum',
  sar_total_segments: 'sarTotalSegments',
  sar_segment_seqnum: 'sarSegmentSeqnum',
  user_message_reference: 'userMessageReference',
};
const NAMED_TLV_BY_KEY = Object.fromEntries(Object.entries(NAMED_TLVS).map(([tag, key]) => [key, tag]));

function camel(snake: string): string {
  return snake.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

interface FieldMap {
  snake: string[];
  camel: string[];
}
const fieldMaps = new Map<string, FieldMap>();

function fieldsOf(command: string): FieldMap {
  let map = fieldMaps.get(command);
  if (!map) {
    const def = smpp.commands[command] as CommandDef;
    const snake = Object.keys(def.params ?? {});
    map = { snake, camel: snake.map(camel) };
    fieldMaps.set(command, map);
  }
  return map;
}

function stripTextFilters(): void {
  for (const def of Object.values(smpp.commands)) {
    for (const param of Object.values(def.params ?? {})) delete param.filter;
  }
  for (const def of Object.values(smpp.tlvs)) delete def.filter;
}
stripTextFilters();

function vendorTag(tag: number): string {
  return `tlv_0x${tag.toString(16).padStart(4, '0')}`;
}

/** Makes the codec carry a TLV it does not know as raw bytes (idempotent). */
export function registerVendorTlv(tag: number): void {
  if (smpp.tlvsById[tag]) return;
  smpp.addTLV(vendorTag(tag), { id: tag, type: smpp.types.tlv.buffer as never });
}

function tlvBytes(tag: string, value: unknown): Buffer {
  const def = smpp.tlvs[tag];
  if (!def) throw new SmppdError(ErrorCode.INTERNAL, `unknown TLV ${tag}`);
  const out = Buffer.alloc(def.type.size(value));
  def.type.write(value, out, 0);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Encoding

/** Encodes one PDU to wire bytes. Throws SmppdError(PDU_MALFORMED) on an unencodable value. */
export function encodePdu(pdu: Pdu): Buffer {
  if (pdu.command === 'other') return encodeHeaderOnly(pdu);
  const options: Record<string, unknown> = {
    sequence_number: pdu.sequenceNumber,
    command_status: pdu.commandStatus,
  };
  const fields = fieldsOf(pdu.command);
  const src = pdu as unknown as Record<string, unknown>;
  for (let i = 0; i < fields.snake.length; i++) {
    const v = src[fields.camel[i]!];
    if (v !== undefined) options[fields.snake[i]!] = v;
  }
  const tlvs = (src['tlvs'] as Tlvs | undefined);
  if (tlvs) addTlvOptions(tlvs, options);
  try {
    const out = new smpp.PDU(pdu.command, options);
    // The codec drops the body of any PDU whose command_status is not 0; a bind_resp or
    // submit_sm_resp with an error is header-only in v3.4 too, so that is what we want.
    return out.toBuffer();
  } catch (e) {
    throw new SmppdError(ErrorCode.PDU_MALFORMED, `cannot encode ${pdu.command}: ${(e as Error).message}`, undefined, { cause: e });
  }
}

function addTlvOptions(tlvs: Tlvs, options: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(tlvs)) {
    if (value === undefined || key === 'other') continue;
    const tag = NAMED_TLV_BY_KEY[key];
    if (tag) options[tag] = value;
  }
  for (const raw of tlvs.other ?? []) {
    registerVendorTlv(raw.tag);
    const def = smpp.tlvsById[raw.tag]!;
    // Known-but-unnamed TLVs are re-read into the codec's own type so it writes them back.
    options[def.tag] = def.type.read(raw.value, 0, raw.value.length);
  }
}

function encodeHeaderOnly(pdu: OtherPdu): Buffer {
  const out = Buffer.alloc(16);
  out.writeUInt32BE(16, 0);
  out.writeUInt32BE(pdu.commandId >>> 0, 4);
  out.writeUInt32BE(pdu.commandStatus >>> 0, 8);
  out.writeUInt32BE(pdu.sequenceNumber >>> 0, 12);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Decoding

export type DecodeResult =
  | { ok: true; pdu: Pdu }
  /** The header was readable but the body was not: answer generic_nack with this sequence. */
  | { ok: false; commandId: number; sequenceNumber: number; reason: string };

/**
 * Decodes one complete frame (command_length already checked by `FrameReader`). Never throws:
 * a bad body is a value the session answers with generic_nack (SMPP v3.4 §2.8).
 */
export function decodePdu(frame: Buffer): DecodeResult {
  const commandId = frame.readUInt32BE(4);
  const commandStatus = frame.readUInt32BE(8);
  const sequenceNumber = frame.readUInt32BE(12);
  const def = smpp.commandsById[commandId];
  if (!def || !HANDLED.has(def.command)) {
    return { ok: true, pdu: { command: 'other', commandId, commandStatus, sequenceNumber, name: def?.command ?? 'unknown' } };
  }
  let raw: CodecPdu;
  try {
    raw = new smpp.PDU(frame);
  } catch (e) {
    return { ok: false, commandId, sequenceNumber, reason: (e as Error).message };
  }
  const fields = fieldsOf(def.command);
  const out: Record<string, unknown> = { command: def.command, commandStatus, sequenceNumber };
  for (let i = 0; i < fields.snake.length; i++) {
    const v = raw[fields.snake[i]!];
    out[fields.camel[i]!] = v ?? defaultFor(def, fields.snake[i]!);
  }
  const tlvs = collectTlvs(raw, def);
  if (tlvs) out['tlvs'] = tlvs;
  const invalid = validateBody(out);
  if (invalid) return { ok: false, commandId, sequenceNumber, reason: invalid };
  return { ok: true, pdu: out as unknown as Pdu };
}

/** A body cut short by command_length leaves fields unread: they take the codec's defaults. */
function defaultFor(def: CommandDef, snake: string): unknown {
  const param = def.params?.[snake];
  if (!param) return undefined;
  return param.default ?? param.type.default ?? 0;
}

function validateBody(out: Record<string, unknown>): string | undefined {
  const sm = out['shortMessage'];
  if (sm !== undefined && !Buffer.isBuffer(sm)) return 'short_message is not bytes';
  return undefined;
}

function collectTlvs(raw: CodecPdu, def: CommandDef): Tlvs | undefined {
  let tlvs: Tlvs | undefined;
  for (const key of Object.keys(raw)) {
    if (def.params && key in def.params) continue;
    const named = NAMED_TLVS[key];
    const value = raw[key];
    if (named) {
      tlvs ??= {};
      (tlvs as Record<string, unknown>)[named] = value;
      continue;
    }
    let rawTlv: RawTlv | undefined;
    if (/^\d+$/.test(key) && Buffer.isBuffer(value)) {
      rawTlv = { tag: Number(key), value };
    } else if (smpp.tlvs[key] && !(key in COMMAND_HEADER_KEYS)) {
      const tlvDef = smpp.tlvs[key];
      const values = tlvDef.multiple && Array.isArray(value) ? value : [value];
      for (const v of values) {
        tlvs ??= {};
        (tlvs.other ??= []).push({ tag: tlvDef.id, value: tlvBytes(key, v) });
      }
      continue;
    }
    if (rawTlv) {
      tlvs ??= {};
      (tlvs.other ??= []).push(rawTlv);
    }
  }
  return tlvs;
}

const COMMAND_HEADER_KEYS: Record<string, true> = {
  command: true, command_length: true, command_id: true, command_status: true, sequence_number: true,
};

/** The SMPP name of a command id, for logs ('unknown' when not a v3.4 command). */
export function commandName(commandId: number): string {
  return smpp.commandsById[commandId]?.command ?? 'unknown';
}
