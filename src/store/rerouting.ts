/**
 * The store's role for failover: the queued messages of an upstream that may move to another
 * upstream of their route, and the move itself, each message composed again for its new upstream
 * (segmentation and encoding follow the upstream). Every part of a message goes through one
 * upstream, so a message moves whole or not at all, and only while none of its parts has left the
 * queue and a claim could take it now. The contract every role shares (commits, times) is in `store.ts`.
 */
import type { RegulatoryIds, VendorTlv } from '../sms/regulatory.js';
import type { Encoding } from '../sms/segment.js';
import type { StoredPartBody } from './intake.js';

/** A queued message that may move to another upstream: none of its parts is inflight or has an outcome, and a claim could take it now. */
export interface MovableMessage {
  id: string;
  client: string;
  upstream: string;
  /** The route it was accepted on; null for messages stored before routes were kept. */
  route: string | null;
  source: string;
  destination: string;
  text: string;
  messageType: 'TEXT' | 'UNICODE';
  /** The SMPP validity_period stored with it ('' = the SMSC's default): kept as it is on a move. */
  validityPeriod: string;
  /** The registry ids it was sent with, for the new upstream's tags. Absent: none. */
  regulatory?: RegulatoryIds;
  /** The highest attempts of its parts (uncertain resends count). */
  attempts: number;
  /** Its place in the queue: `movable`'s `after` continues past it. */
  seq: number;
}

/** A message composed again for another upstream. */
export interface MessageMove {
  id: string;
  /** The upstream it must still be on for the move to happen. */
  from: string;
  upstream: string;
  encoding: Encoding;
  registeredDelivery: number;
  sourceTon: number;
  sourceNpi: number;
  /** Its regulatory ids in the new upstream's tags, replacing those it had. Absent or empty: none. */
  vendorTlvs?: VendorTlv[];
  /** The message composed again for `upstream`: its new parts (may be more or fewer than before), at least one. */
  parts: StoredPartBody[];
}

export interface MessageRerouting {
  /**
   * Messages on `upstream` whose every part is queued (not inflight, no outcome yet) and that a
   * claim could take at `now`: not held (its batch active or none, its schedule released or none),
   * its first part's not-before time null or passed, not expired (`expire` fails those). A failover
   * moves only these: a paused campaign, a schedule due in three days or a message waiting for its
   * retry would not go out now anyway, and an outage shorter than their wait must not send them
   * through another upstream for good. Oldest first, at most `limit` (≥ 0). The cost grows with
   * `limit` and with the not-yet-due messages among the oldest, not with the held ones or the rest
   * of the queue. `after` (a `seq`): only messages after that one, so that a caller can read past
   * messages it chose not to move.
   */
  movable(upstream: string, limit: number, now: number, after?: number): Promise<MovableMessage[]>;

  /**
   * Moves each message that is still on `from` with every part still queued and that a claim could
   * still take at `now`, as `movable` lists them (else it is left alone: a claim or another instance
   * took it first, or its batch was paused since the list): its parts are replaced by `parts`
   * (queued, not held, each with `attempts` = the old parts' highest, the same not-before/retry time
   * as before, changed at `now`: ready for the new upstream's dispatcher since then), and the
   * message's upstream, encoding, registered_delivery, source TON/NPI and vendor TLVs are set. Its status, batch
   * and schedule stay, and a later pause or abort of its batch reaches it on the new upstream; no
   * status event is written (its status has not changed). One commit for the whole call. Returns the
   * ids moved, in the order given. A move without parts is a caller's bug (INTERNAL), and then
   * nothing of the call is moved.
   */
  move(moves: readonly MessageMove[], now: number): Promise<string[]>;
}
