/**
 * The store's role for inbound (MO) messages: whole ones stored with their event, the parts of a
 * concatenated one held until it is whole or has waited too long. The contract every role shares
 * (commits, times) is in `store.ts`.
 */
import type { ConcatScheme, MoPiece } from '../sms/inbound.js';
import type { DecodeProblem, DefaultAlphabet } from '../sms/text-codec.js';

export interface InboundRecord {
  upstream: string;
  /** The client it is routed to (inboundNumbers, or the upstream's inboundClient); null: none. */
  client: string | null;
  /** Whether it becomes an inbound event for `client` (the client has a webhook). */
  events: boolean;
  source: string;
  destination: string;
  text: string;
  dataCoding: number;
  /** Parts it arrived in. */
  parts: number;
  /** Sequence numbers of parts that never came (it waited `expireInboundParts`' time for them); absent or empty: whole. */
  missingParts?: readonly number[];
  /** What could not be decoded (`DecodeProblem`); absent or empty: every byte decoded cleanly. */
  problems?: readonly DecodeProblem[];
  /** With `problems`: the user data the text was read from, kept as it came. */
  raw?: Buffer;
  receivedAt: number;
}

/**
 * One part of a concatenated MO message (`recordInboundPart`). Upstream, source, destination,
 * reference and part count name the message (TS 23.040 §9.2.3.24.1: the reference is the same in
 * every part from one originator; the count tells apart two messages that reuse a reference).
 */
export interface InboundPartRecord {
  upstream: string;
  /** The route of the message, as `InboundRecord`'s: the last part's is the one stored. */
  client: string | null;
  events: boolean;
  source: string;
  destination: string;
  /** How the parts name their message: part of its key, with `ref` (an 8-bit and a 16-bit reference 7 are two messages). */
  scheme: ConcatScheme;
  ref: number;
  /** Parts of the message, 2..255. */
  total: number;
  piece: MoPiece;
  /** What data_coding 0 means on the upstream: kept with the part, to decode the message once whole. */
  defaultAlphabet: DefaultAlphabet;
  receivedAt: number;
}

export type InboundPartOutcome =
  /** Stored, waiting for the others; `parts` have arrived. */
  | { kind: 'held'; parts: number }
  /**
   * Nothing changed: the part is held already, or repeats (same number, same bytes) a part of a
   * message stored within the wait (an SMSC delivering again after a lost deliver_sm_resp).
   */
  | { kind: 'repeat' }
  /** It was the last one: the message is stored, with its event, in the same commit, and its parts removed. */
  | { kind: 'stored'; inboundId: number; parts: number };

/** A concatenated MO message stored without all its parts by `expireInboundParts`. */
export interface ExpiredInbound {
  upstream: string;
  inboundId: number;
  source: string;
  destination: string;
  parts: number;
  missingParts: number[];
}

export interface InboundMessages {
  /** Stores an inbound (MO) message and its outbox event. */
  recordInbound(inbound: InboundRecord): Promise<void>;

  /**
   * Stores one part of a concatenated MO message, so that it survives a crash before the others
   * come. The part that completes the message has the message assembled (`assembleMo`), stored
   * with its event and its parts removed, in its own commit. What stays of a stored message is a
   * digest of each part until `expireInboundParts(before)` passes its time, so a part delivered
   * again is a `repeat`, not the start of a new message; a part with other bytes under the same
   * key is a new message reusing the reference. Safe when parts of one message arrive at several
   * instances at once (PostgreSQL: they are serialised per message).
   */
  recordInboundPart(part: InboundPartRecord): Promise<InboundPartOutcome>;

  /**
   * Stores as they are, with their events, the concatenated MO messages whose first waiting part
   * arrived before `before` (their missing parts listed), and forgets stored messages older than
   * `before`. At most `limit` messages (≥ 1) per call, oldest first; call again while it returns
   * `limit`.
   */
  expireInboundParts(before: number, limit: number): Promise<ExpiredInbound[]>;
}
