/**
 * Delivery receipts: a deliver_sm or data_sm whose esm_class says it is one (SMPP v3.4
 * §5.2.12). The TLVs receipted_message_id, message_state and network_error_code (§5.3.2.12,
 * .35, .31) are read first; then the text of Appendix B, which is only "de facto" and which
 * SMSCs write in many ways, is read leniently. Nothing is thrown: what cannot be read is null,
 * and why is said in `warnings`. Pure.
 */
import { formatsMatching, normalizeId } from './message-id.js';
import { parseTimeZone, type SmscTimeZone } from '../core/time-zone.js';
import { receiptDateToIso } from './smpp-time.js';

/** SMPP v3.4 §5.2.12: esm_class bits 2–5 are the message type. */
const MESSAGE_TYPE_MASK = 0x3c;
/** 0x04 SMSC delivery receipt, 0x08 SME delivery acknowledgement, 0x20 intermediate delivery notification. */
const RECEIPT_TYPES: ReadonlySet<number> = new Set([0x04, 0x08, 0x20]);
/** SMPP v3.4 §5.2.12, GSM feature bit 6: short_message starts with a user data header. */
const UDHI = 0x40;

/** Whether a deliver_sm or data_sm with this esm_class carries a receipt (SMPP v3.4 §5.2.12). */
export function isReceipt(esmClass: number): boolean {
  return RECEIPT_TYPES.has(esmClass & MESSAGE_TYPE_MASK);
}

/** message_state (SMPP v3.4 §5.2.28) as the stat word of the receipt text (Appendix B). */
export const MESSAGE_STATE_STAT = {
  1: 'ENROUTE',
  2: 'DELIVRD',
  3: 'EXPIRED',
  4: 'DELETED',
  5: 'UNDELIV',
  6: 'ACCEPTD',
  7: 'UNKNOWN',
  8: 'REJECTD',
} as const satisfies Record<number, string>;

/** The §5.2.28 names some SMSCs write in the text instead of the Appendix B abbreviations. */
const FULL_STAT_NAMES: Readonly<Record<string, string>> = {
  DELIVERED: 'DELIVRD',
  UNDELIVERABLE: 'UNDELIV',
  ACCEPTED: 'ACCEPTD',
  REJECTED: 'REJECTD',
};

/** The TLVs a receipt may carry, as the codec names them (a decoded PDU's `tlvs` fits). */
export interface ReceiptTlvs {
  receiptedMessageId?: string;
  messageState?: number;
  networkErrorCode?: Buffer;
  messagePayload?: Buffer;
}

/** What the parser reads of a deliver_sm or data_sm (no short_message); a decoded PDU fits. */
export interface ReceiptSource {
  esmClass: number;
  shortMessage?: Buffer;
  tlvs?: ReceiptTlvs;
}

export interface ReceiptOptions {
  /** The upstream's SMSC time zone, in which receipt dates are written: 'UTC', '+04:00', 'Asia/Dubai'. */
  timeZone: string | SmscTimeZone;
}

/** network_error_code (SMPP v3.4 §5.3.2.31): network type (1 ANSI-136, 2 IS-95, 3 GSM), then the code. */
export interface NetworkError {
  type: number;
  code: number;
}

export interface Receipt {
  /** The message id, raw as written: receipted_message_id when present, else the text's `id:`. */
  id: string | null;
  /** The stat word, upper-cased: from message_state when present, else the text's `stat:`. Unknown words kept. */
  stat: string | null;
  /** The text's `err:` as written ('034', '1234'). */
  err: string | null;
  /** The text's `sub:` and `dlvrd:` as written. */
  sub: string | null;
  dlvrd: string | null;
  /** ISO 8601 UTC, from the SMSC's local time. */
  submitDate: string | null;
  doneDate: string | null;
  /** Everything after `text:` as written ('' when empty), null when there is no `text:`. */
  text: string | null;
  networkError?: NetworkError;
  /** The receipt text as Latin-1 (short_message, or message_payload when short_message is empty). */
  raw: string;
  /** What was missing, unreadable or contradictory; empty for a clean receipt. */
  warnings: string[];
}

/** The fields of Appendix B, keyed without case, spaces or underscores. */
type TextField = 'id' | 'sub' | 'dlvrd' | 'submitdate' | 'donedate' | 'stat' | 'err';
const TEXT_FIELDS: ReadonlySet<string> = new Set<TextField>(['id', 'sub', 'dlvrd', 'submitdate', 'donedate', 'stat', 'err']);

/**
 * A key: a word (or 'submit date' / 'done date', also with '_' or no space) followed by ':',
 * at the start or after white space, so 'abc:def' inside a value is not a key. Unknown keys
 * (vendor extras) end the value before them and are otherwise ignored.
 */
const KEY = /(?<!\S)(submit[ _]*date|done[ _]*date|[a-z][a-z0-9_]*)[ \t]*:/gi;

interface ParsedText {
  fields: Partial<Record<TextField, string>>;
  text: string | null;
  duplicates: string[];
}

/**
 * Reads `key:value` fields in any order and case. `text:` is last by the format: everything
 * after it is the user's text, never read for fields (a 'stat:' there is the user's).
 */
function parseText(body: string): ParsedText {
  const fields: Partial<Record<TextField, string>> = {};
  const duplicates: string[] = [];
  const keys = [...body.matchAll(KEY)];
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const name = k[1]!.toLowerCase().replace(/[ _]/g, '');
    const valueStart = k.index + k[0].length;
    if (name === 'text') return { fields, text: body.slice(valueStart), duplicates };
    if (!TEXT_FIELDS.has(name)) continue;
    const next = keys[i + 1];
    // A NUL ends a value as white space does: some SMSCs send short_message as a C string, and an
    // id, stat or err that kept it could not be stored (PostgreSQL text holds no U+0000).
    const value = body.slice(valueStart, next === undefined ? body.length : next.index).replaceAll('\u0000', ' ').trim().split(/\s+/)[0] ?? '';
    if (value === '') continue;
    const field = name as TextField;
    const seen = fields[field];
    if (seen === undefined) fields[field] = value;
    else if (seen !== value) duplicates.push(`${k[1]!}:${value}`);
  }
  return { fields, text: null, duplicates };
}

/** The bytes that hold the receipt text: short_message after any UDH, else message_payload (§5.3.2.32). */
function receiptBytes(pdu: ReceiptSource): Buffer {
  const sm = pdu.shortMessage ?? Buffer.alloc(0);
  if (sm.length === 0) return pdu.tlvs?.messagePayload ?? sm;
  return sm;
}

function skipUdh(bytes: Buffer, esmClass: number): Buffer {
  if ((esmClass & UDHI) === 0 || bytes.length === 0) return bytes;
  const end = bytes[0]! + 1;
  return end <= bytes.length ? bytes.subarray(end) : bytes;
}

const hex2 = (n: number): string => `0x${n.toString(16).padStart(2, '0')}`;

function stateWord(state: number | undefined, warnings: string[]): string | null {
  if (state === undefined) return null;
  const word = Object.hasOwn(MESSAGE_STATE_STAT, state) ? MESSAGE_STATE_STAT[state as keyof typeof MESSAGE_STATE_STAT] : undefined;
  if (word === undefined) warnings.push(`message_state ${state} is not an SMPP v3.4 value (§5.2.28); ignored`);
  return word ?? null;
}

function networkError(value: Buffer | undefined, warnings: string[]): NetworkError | undefined {
  if (value === undefined) return undefined;
  if (value.length !== 3) warnings.push(`network_error_code is ${value.length} bytes, not 3 (SMPP v3.4 §5.3.2.31)`);
  if (value.length < 3) return undefined;
  return { type: value[0]!, code: value.readUInt16BE(1) };
}

function crossCheckId(tlvId: string, textId: string | undefined, warnings: string[]): void {
  if (textId === undefined || normalizeId(tlvId) === normalizeId(textId)) return;
  const bases = formatsMatching(tlvId, textId).length > 0 ? ' (the same number in hex and in decimal)' : '';
  warnings.push(`id mismatch: receipted_message_id "${tlvId}", text id "${textId}"${bases}; the TLV is used`);
}

function crossCheckStat(tlvStat: string, textStat: string | undefined, warnings: string[]): void {
  if (textStat === undefined || (FULL_STAT_NAMES[textStat] ?? textStat) === tlvStat) return;
  warnings.push(`stat mismatch: message_state ${tlvStat}, text stat ${textStat}; the TLV is used`);
}

function dateField(name: string, value: string | undefined, zone: SmscTimeZone | null, warnings: string[]): string | null {
  if (value === undefined || zone === null) return null;
  const iso = receiptDateToIso(value, zone);
  if (iso === null) warnings.push(`${name} "${value}" is not a YYMMDDhhmm[ss] or YYYYMMDDhhmmss date`);
  return iso;
}

/** Reads a receipt; never throws. See `Receipt` for where each field comes from. */
export function parseReceipt(pdu: ReceiptSource, options: ReceiptOptions): Receipt {
  let raw = '';
  try {
    const warnings: string[] = [];
    const bytes = receiptBytes(pdu);
    raw = bytes.toString('latin1');
    if (!isReceipt(pdu.esmClass)) warnings.push(`esm_class ${hex2(pdu.esmClass & 0xff)} is not a receipt type (SMPP v3.4 §5.2.12)`);
    const tlvs = pdu.tlvs ?? {};
    const tlvId = tlvs.receiptedMessageId !== undefined && tlvs.receiptedMessageId.trim() !== '' ? tlvs.receiptedMessageId : null;
    const tlvStat = stateWord(tlvs.messageState, warnings);
    const netError = networkError(tlvs.networkErrorCode, warnings);

    const parsed = parseText(skipUdh(bytes, pdu.esmClass).toString('latin1'));
    const f = parsed.fields;
    for (const d of parsed.duplicates) warnings.push(`repeated field ${d} ignored; the first one is used`);
    const textStat = f.stat?.toUpperCase();
    if (tlvId !== null) crossCheckId(tlvId, f.id, warnings);
    if (tlvStat !== null) crossCheckStat(tlvStat, textStat, warnings);

    const zone = typeof options.timeZone === 'string' ? parseTimeZone(options.timeZone) : options.timeZone;
    if (zone === null && (f.submitdate !== undefined || f.donedate !== undefined)) {
      warnings.push(`unknown time zone "${typeof options.timeZone === 'string' ? options.timeZone : options.timeZone.spec}": dates not converted`);
    }
    const receipt: Receipt = {
      id: tlvId ?? f.id ?? null,
      stat: tlvStat ?? textStat ?? null,
      err: f.err ?? null,
      sub: f.sub ?? null,
      dlvrd: f.dlvrd ?? null,
      submitDate: dateField('submit date', f.submitdate, zone, warnings),
      doneDate: dateField('done date', f.donedate, zone, warnings),
      text: parsed.text,
      raw,
      warnings,
    };
    if (netError !== undefined) receipt.networkError = netError;
    if (receipt.id === null) warnings.push('no message id: neither receipted_message_id nor id: in the text');
    if (receipt.stat === null) warnings.push('no state: neither message_state nor stat: in the text');
    return receipt;
  } catch (e) {
    // A last guard for the promise above: a receipt is data, never an exception.
    const why = e instanceof Error ? e.message : String(e);
    return { id: null, stat: null, err: null, sub: null, dlvrd: null, submitDate: null, doneDate: null, text: null, raw, warnings: [`unreadable receipt: ${why}`] };
  }
}
