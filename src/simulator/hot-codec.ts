/**
 * The PDUs every message costs the SMSC, read and written by hand: submit_sm in, submit_sm_resp
 * (or generic_nack) out. The table-driven codec in `smpp/wire.ts` walks a field plan per PDU and
 * builds objects key by key; here each PDU is a few direct reads or writes. Everything else
 * (binds, TLVs, malformed bodies, rare commands) still goes through `wire.ts`, and the tests hold
 * these bytes equal to what `wire.ts` reads and writes. The receipt's deliver_sm is written the
 * same way, in `receipts.ts`.
 */
import type { SubmitSmPdu } from '../smpp/pdu.js';
import { writeHeader } from '../smpp/wire.js';

/** SMPP v3.4 §3.2. */
const HEADER = 16;
const SUBMIT_SM_RESP = 0x80000004;
const GENERIC_NACK = 0x80000000;

function headerOnly(commandId: number, status: number, sequence: number): Buffer {
  const out = Buffer.allocUnsafe(HEADER);
  writeHeader(out, commandId, status, sequence);
  return out;
}

/**
 * Writes `s` as Latin-1 at `offset`; returns the offset after it. The strings here are short and
 * Latin-1 already (read from the wire as Latin-1, or ASCII): a loop beats `Buffer.write`'s call.
 */
export function writeLatin1(out: Buffer, s: string, offset: number): number {
  for (let i = 0; i < s.length; i++) out[offset + i] = s.charCodeAt(i);
  return offset + s.length;
}

/** Writes `s` as a C-Octet String (Latin-1, then NUL) at `offset`; returns the offset after it. */
export function writeCString(out: Buffer, s: string, offset: number): number {
  const end = writeLatin1(out, s, offset);
  out[end] = 0;
  return end + 1;
}

/** submit_sm_resp; SMPP v3.4 §4: one with a non-zero command_status carries no body. */
export function encodeSubmitSmResp(sequence: number, status: number, messageId: string): Buffer {
  if (status !== 0) return headerOnly(SUBMIT_SM_RESP, status, sequence);
  const out = Buffer.allocUnsafe(HEADER + messageId.length + 1);
  writeHeader(out, SUBMIT_SM_RESP, 0, sequence);
  writeCString(out, messageId, HEADER);
  return out;
}

export function encodeGenericNack(sequence: number, status: number): Buffer {
  return headerOnly(GENERIC_NACK, status, sequence);
}

/** Where the C-Octet String at `offset` ends (its NUL), or -1 when it does not end inside the frame. */
function nulAt(frame: Buffer, offset: number): number {
  return offset < frame.length ? frame.indexOf(0, offset) : -1;
}

function text(frame: Buffer, start: number, end: number): string {
  return end === start ? '' : frame.toString('latin1', start, end);
}

/**
 * A submit_sm without optional parameters (SMPP v3.4 §4.4.1), as `decodePdu` would give it; the
 * frame is exactly command_length long. undefined when the body has TLVs or is not well formed:
 * the caller then decodes it with `decodePdu`, which reads TLVs and says what is wrong.
 */
export function readSubmitSm(frame: Buffer): SubmitSmPdu | undefined {
  const serviceTypeEnd = nulAt(frame, HEADER);
  if (serviceTypeEnd < 0) return undefined;
  let o = serviceTypeEnd + 1;
  const sourceEnd = nulAt(frame, o + 2);
  if (sourceEnd < 0) return undefined;
  const sourceAddrTon = frame[o]!;
  const sourceAddrNpi = frame[o + 1]!;
  o = sourceEnd + 1;
  const destEnd = nulAt(frame, o + 2);
  if (destEnd < 0) return undefined;
  const destAddrTon = frame[o]!;
  const destAddrNpi = frame[o + 1]!;
  o = destEnd + 1;
  const scheduleEnd = nulAt(frame, o + 3);
  if (scheduleEnd < 0) return undefined;
  const esmClass = frame[o]!;
  const protocolId = frame[o + 1]!;
  const priorityFlag = frame[o + 2]!;
  const validityEnd = nulAt(frame, scheduleEnd + 1);
  if (validityEnd < 0) return undefined;
  o = validityEnd + 1;
  // registered_delivery, replace_if_present_flag, data_coding, sm_default_msg_id, sm_length
  if (o + 5 > frame.length) return undefined;
  const smStart = o + 5;
  const smEnd = smStart + frame[o + 4]!;
  if (smEnd !== frame.length) return undefined;
  return {
    command: 'submit_sm',
    commandStatus: frame.readUInt32BE(8),
    sequenceNumber: frame.readUInt32BE(12),
    serviceType: text(frame, HEADER, serviceTypeEnd),
    sourceAddrTon,
    sourceAddrNpi,
    sourceAddr: text(frame, serviceTypeEnd + 3, sourceEnd),
    destAddrTon,
    destAddrNpi,
    destinationAddr: text(frame, sourceEnd + 3, destEnd),
    esmClass,
    protocolId,
    priorityFlag,
    scheduleDeliveryTime: text(frame, destEnd + 4, scheduleEnd),
    validityPeriod: text(frame, scheduleEnd + 1, validityEnd),
    registeredDelivery: frame[o]!,
    replaceIfPresentFlag: frame[o + 1]!,
    dataCoding: frame[o + 2]!,
    smDefaultMsgId: frame[o + 3]!,
    shortMessage: frame.subarray(smStart, smEnd),
  };
}
