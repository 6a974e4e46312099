/**
 * Mobile-originated messages: a deliver_sm that is not a receipt. Long MOs arrive in parts,
 * concatenated by UDH (TS 23.040 §9.2.3.24.1 and .8, when esm_class has UDHI) or by the
 * sar_* TLVs (SMPP v3.4 §5.3.2.22–24), in any order, sometimes twice. Pure: `frameMo` reads a
 * part; the parts wait in the store (`Store.recordInboundPart`), which puts a message together
 * with `assembleMo` once it is whole, or once it has waited long enough.
 */
import { DECODE_PROBLEMS, decodeUserData, type DecodeProblem, type DefaultAlphabet } from './text-codec.js';
import { ESM_CLASS_UDHI, parseUdh, type NationalShift } from './udh.js';

export interface MoPart {
  readonly dataCoding: number;
  readonly esmClass: number;
  readonly shortMessage: Buffer;
  /** The message_payload TLV, read when short_message is empty (SMPP v3.4 §5.3.2.32). */
  readonly messagePayload?: Buffer;
  readonly sar?: { readonly refNum: number; readonly total: number; readonly seq: number };
}

/** One part's user data as it waits for the others: its place, its bytes without the UDH, how to read them. */
export interface MoPiece {
  /** 1-based; 1 for a message of one part. */
  readonly seq: number;
  readonly dataCoding: number;
  /** The user data after its UDH; all of it when the UDH is malformed. */
  readonly body: Buffer;
  /** The national language tables its UDH names. */
  readonly shift?: NationalShift;
  /** esm_class announced a UDH that could not be parsed (`UDH_INVALID`). */
  readonly udhInvalid: boolean;
}

/**
 * How a part names its message: a UDH concatenation element with an 8-bit or a 16-bit reference
 * (TS 23.040 §9.2.3.24.1 and .8), or the sar_* TLVs (16 bits, SMPP v3.4 §5.3.2.22). A reference is
 * a message's only by its scheme: an 8-bit and a 16-bit reference 7 are two messages.
 */
export type ConcatScheme = 'udh8' | 'udh16' | 'sar';

/** A part, framed: its piece, and the message it belongs to when it is one of several. */
export interface FramedMo {
  readonly piece: MoPiece;
  /** The concatenation reference, its scheme and the part count (2..255); absent for a message of one part. */
  readonly concat?: { readonly scheme: ConcatScheme; readonly ref: number; readonly total: number };
}

export interface AssembledMo {
  /** The parts' text in sequence order; for binary data_coding, lowercase hex. */
  readonly text: string;
  /** Parts that arrived. */
  readonly parts: number;
  /** Sequence numbers that never arrived (1-based); empty when the message is whole. */
  readonly missing: readonly number[];
  /** data_coding of the first part that arrived. */
  readonly dataCoding: number;
  /** What could not be decoded, in `DECODE_PROBLEMS` order; empty when every byte decoded cleanly. */
  readonly problems: readonly DecodeProblem[];
  /** With `problems`: the pieces' bodies in sequence order, the bytes the text was read from. */
  readonly raw?: Buffer;
}

/** Splits a part into its body and what concatenation it declares: UDH first, then SAR. */
export function frameMo(part: MoPart): FramedMo {
  const userData = part.shortMessage.length === 0 && part.messagePayload ? part.messagePayload : part.shortMessage;
  const udhi = (part.esmClass & ESM_CLASS_UDHI) !== 0;
  const udh = udhi ? parseUdh(userData) : undefined;
  // A malformed UDH leaves the whole user data as body, flagged: better garbled text than a lost MO.
  const body = udh ? udh.body : userData;
  const shift = udh?.nationalShift;
  const base = { dataCoding: part.dataCoding, body, udhInvalid: udhi && !udh, ...(shift ? { shift } : {}) };
  const concat = udh?.concat ? { ...udh.concat, scheme: udh.concat.referenceBits === 16 ? 'udh16' as const : 'udh8' as const } : sarOf(part.sar);
  if (!concat || concat.total === 1) return { piece: { ...base, seq: 1 } };
  return { piece: { ...base, seq: concat.seq }, concat: { scheme: concat.scheme, ref: concat.ref, total: concat.total } };
}

function sarOf(sar: MoPart['sar']): { scheme: 'sar'; ref: number; total: number; seq: number } | undefined {
  if (!sar || sar.total < 1 || sar.seq < 1 || sar.seq > sar.total) return undefined;
  return { scheme: 'sar', ref: sar.refNum, total: sar.total, seq: sar.seq };
}

/**
 * The message of `total` parts out of the pieces that arrived (any order, one per sequence
 * number). Adjacent pieces with the same coding are joined before decoding, so an escape
 * sequence or a UCS-2 code unit a sender split across parts decodes whole.
 */
export function assembleMo(total: number, arrived: readonly MoPiece[], defaultAlphabet: DefaultAlphabet): AssembledMo {
  const pieces = [...arrived].sort((a, b) => a.seq - b.seq);
  const have = new Set(pieces.map((p) => p.seq));
  const missing: number[] = [];
  for (let seq = 1; seq <= total; seq++) if (!have.has(seq)) missing.push(seq);
  const found = new Set<DecodeProblem>(pieces.some((p) => p.udhInvalid) ? ['UDH_INVALID'] : []);
  let text = '';
  let run: MoPiece[] = [];
  const flush = (): void => {
    const first = run[0];
    if (!first) return;
    const decoded = decodeUserData(Buffer.concat(run.map((p) => p.body)), first.dataCoding, defaultAlphabet, first.shift);
    text += decoded.text;
    for (const p of decoded.problems) found.add(p);
    run = [];
  };
  for (const p of pieces) {
    const last = run[run.length - 1];
    if (last && !(p.seq === last.seq + 1 && p.dataCoding === last.dataCoding && sameShift(p.shift, last.shift))) flush();
    run.push(p);
  }
  flush();
  const problems = DECODE_PROBLEMS.filter((p) => found.has(p));
  return {
    text,
    parts: pieces.length,
    missing,
    dataCoding: pieces[0]?.dataCoding ?? 0,
    problems,
    ...(problems.length > 0 ? { raw: Buffer.concat(pieces.map((p) => p.body)) } : {}),
  };
}

function sameShift(a: NationalShift | undefined, b: NationalShift | undefined): boolean {
  return (a?.locking ?? 0) === (b?.locking ?? 0) && (a?.single ?? 0) === (b?.single ?? 0);
}
