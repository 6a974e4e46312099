/**
 * Mobile-originated messages: a deliver_sm that is not a receipt. Long MOs arrive in parts,
 * concatenated by UDH (TS 23.040 §9.2.3.24.1 and .8, when esm_class has UDHI) or by the
 * sar_* TLVs (SMPP v3.4 §5.3.2.22–24), in any order, sometimes twice. Pure: time is an argument.
 */
import { decodeShortMessage, type DefaultAlphabet } from './text-codec.js';
import { ESM_CLASS_UDHI, parseUdh, type NationalShift } from './udh.js';

export interface MoPart {
  readonly source: string;
  readonly destination: string;
  readonly dataCoding: number;
  readonly esmClass: number;
  readonly shortMessage: Buffer;
  /** The message_payload TLV, read when short_message is empty (SMPP v3.4 §5.3.2.32). */
  readonly messagePayload?: Buffer;
  readonly sar?: { readonly refNum: number; readonly total: number; readonly seq: number };
  /** Milliseconds, on whatever clock the caller also passes to `expire`. */
  readonly receivedAt: number;
}

export interface MoMessage {
  readonly source: string;
  readonly destination: string;
  /** The parts' text in sequence order; for binary data_coding, lowercase hex. */
  readonly text: string;
  /** Parts that arrived. */
  readonly parts: number;
  /** Parts the message was sent in. */
  readonly total: number;
  /** False when `expire` gave up waiting: `text` then lacks the `missing` parts. */
  readonly complete: boolean;
  /** Sequence numbers that never arrived (1-based); empty when complete. */
  readonly missing: readonly number[];
  /** data_coding of the first part. */
  readonly dataCoding: number;
  /** When the earliest part arrived. */
  readonly receivedAt: number;
}

export interface MoReassemblerOptions {
  /** What data_coding 0 means on this upstream. */
  readonly defaultAlphabet: DefaultAlphabet;
  /**
   * Most incomplete messages held, default 10,000. Past it the oldest is given up early
   * (delivered incomplete by the next `expire`), so memory stays bounded.
   */
  readonly maxGroups?: number;
}

interface Piece {
  readonly seq: number;
  readonly dataCoding: number;
  readonly body: Buffer;
  readonly shift?: NationalShift;
}

interface Group {
  readonly source: string;
  readonly destination: string;
  readonly total: number;
  firstAt: number;
  readonly pieces: Map<number, Piece>;
}

interface Framed {
  readonly piece: Piece;
  readonly concat?: { readonly ref: number; readonly total: number };
}

export class MoReassembler {
  readonly #defaultAlphabet: DefaultAlphabet;
  readonly #maxGroups: number;
  readonly #groups = new Map<string, Group>();
  /** Messages lately completed, so a part the SMSC delivers again afterwards is not a new message. */
  readonly #recent = new Map<string, { readonly at: number; readonly bodies: ReadonlyMap<number, Buffer> }>();
  #evicted: MoMessage[] = [];

  constructor(options: MoReassemblerOptions) {
    this.#defaultAlphabet = options.defaultAlphabet;
    this.#maxGroups = Math.max(1, options.maxGroups ?? 10_000);
  }

  /** Incomplete messages held. */
  get pending(): number {
    return this.#groups.size;
  }

  /**
   * Takes one part. Returns the message when this part completes it (at once for a message
   * of one part), else undefined. A part already held is ignored, and so is a part that
   * repeats (same key, number and bytes) one of a message completed within the last maxAge.
   */
  add(part: MoPart): MoMessage | undefined {
    const { piece, concat } = frame(part);
    if (!concat || concat.total === 1) {
      return this.#message(part.source, part.destination, 1, part.receivedAt, [piece]);
    }
    // TS 23.040 §9.2.3.24.1: the reference is the same in every part of one message from one
    // originator; the part count tells apart two messages that happen to reuse a reference.
    const key = JSON.stringify([part.source, part.destination, concat.ref, concat.total]);
    let group = this.#groups.get(key);
    if (!group && this.#recent.get(key)?.bodies.get(piece.seq)?.equals(piece.body)) return undefined;
    if (!group) {
      this.#evictOverflow();
      group = {
        source: part.source,
        destination: part.destination,
        total: concat.total,
        firstAt: part.receivedAt,
        pieces: new Map(),
      };
      this.#groups.set(key, group);
    }
    group.firstAt = Math.min(group.firstAt, part.receivedAt);
    if (!group.pieces.has(piece.seq)) group.pieces.set(piece.seq, piece);
    if (group.pieces.size < group.total) return undefined;
    this.#groups.delete(key);
    this.#remember(key, part.receivedAt, group.pieces);
    return this.#message(group.source, group.destination, group.total, group.firstAt, [...group.pieces.values()]);
  }

  /**
   * Gives up on messages whose first part came `maxAgeMs` or more before `now`, and on any
   * evicted for room, returning what arrived of them (complete: false) rather than losing it.
   */
  expire(now: number, maxAgeMs: number): MoMessage[] {
    const out = this.#evicted;
    this.#evicted = [];
    for (const [key, r] of this.#recent) if (now - r.at >= maxAgeMs) this.#recent.delete(key);
    for (const [key, g] of this.#groups) {
      if (now - g.firstAt < maxAgeMs) continue;
      this.#groups.delete(key);
      out.push(this.#message(g.source, g.destination, g.total, g.firstAt, [...g.pieces.values()]));
    }
    return out;
  }

  #remember(key: string, at: number, pieces: ReadonlyMap<number, Piece>): void {
    this.#recent.delete(key);
    while (this.#recent.size >= this.#maxGroups) {
      const oldest = this.#recent.keys().next().value;
      if (oldest === undefined) break;
      this.#recent.delete(oldest);
    }
    this.#recent.set(key, { at, bodies: new Map([...pieces].map(([seq, p]) => [seq, p.body])) });
  }

  #evictOverflow(): void {
    while (this.#groups.size >= this.#maxGroups) {
      const oldest = this.#groups.entries().next().value;
      if (!oldest) return;
      const [key, g] = oldest;
      this.#groups.delete(key);
      this.#evicted.push(this.#message(g.source, g.destination, g.total, g.firstAt, [...g.pieces.values()]));
    }
  }

  #message(source: string, destination: string, total: number, receivedAt: number, pieces: Piece[]): MoMessage {
    pieces.sort((a, b) => a.seq - b.seq);
    const missing: number[] = [];
    const have = new Set(pieces.map((p) => p.seq));
    for (let seq = 1; seq <= total; seq++) if (!have.has(seq)) missing.push(seq);
    return {
      source,
      destination,
      text: this.#decode(pieces),
      parts: pieces.length,
      total,
      complete: missing.length === 0,
      missing,
      dataCoding: pieces[0]?.dataCoding ?? 0,
      receivedAt,
    };
  }

  /**
   * Joins the bodies of adjacent parts with the same coding before decoding, so an escape
   * sequence or a UCS-2 code unit a sender split across parts decodes whole.
   */
  #decode(pieces: readonly Piece[]): string {
    let text = '';
    let run: Piece[] = [];
    const flush = (): void => {
      const first = run[0];
      if (!first) return;
      const bytes = Buffer.concat(run.map((p) => p.body));
      text += decodeShortMessage(bytes, first.dataCoding, this.#defaultAlphabet, first.shift);
      run = [];
    };
    for (const p of pieces) {
      const last = run[run.length - 1];
      if (last && !(p.seq === last.seq + 1 && p.dataCoding === last.dataCoding && sameShift(p.shift, last.shift))) {
        flush();
      }
      run.push(p);
    }
    flush();
    return text;
  }
}

function sameShift(a: NationalShift | undefined, b: NationalShift | undefined): boolean {
  return (a?.locking ?? 0) === (b?.locking ?? 0) && (a?.single ?? 0) === (b?.single ?? 0);
}

/** Splits a part into its body and what concatenation it declares: UDH first, then SAR. */
function frame(part: MoPart): Framed {
  const userData = part.shortMessage.length === 0 && part.messagePayload ? part.messagePayload : part.shortMessage;
  // A malformed UDH leaves the whole user data as body: better garbled text than a lost MO.
  const udh = (part.esmClass & ESM_CLASS_UDHI) !== 0 ? parseUdh(userData) : undefined;
  const body = udh ? udh.body : userData;
  const shift = udh?.nationalShift;
  const base = { dataCoding: part.dataCoding, body, ...(shift ? { shift } : {}) };
  if (udh?.concat) {
    const { ref, total, seq } = udh.concat;
    return { piece: { ...base, seq }, concat: { ref, total } };
  }
  const sar = part.sar;
  if (sar && sar.total >= 1 && sar.seq >= 1 && sar.seq <= sar.total) {
    return { piece: { ...base, seq: sar.seq }, concat: { ref: sar.refNum, total: sar.total } };
  }
  return { piece: { ...base, seq: 1 } };
}
