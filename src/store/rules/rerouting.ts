/**
 * The rules of moving a message to another upstream (`../rerouting.ts`), decided once for both
 * stores: which messages may move, what the new parts keep of the old ones, and the rows a
 * `movable` read gives.
 */
import { ErrorCode, SmppdError } from '../../core/errors.js';
import type { PartState } from '../claims.js';
import type { MessageMove, MovableMessage } from '../rerouting.js';
import type { MessageRow } from '../rows.js';
import { regulatoryIds, type RegulatoryColumns } from './regulatory.js';

/** A message that `movable` lists, as both stores read it: its columns, and its parts' highest attempts. */
export type MovableRow = Pick<MessageRow, 'id' | 'client' | 'upstream' | 'route' | 'source' | 'destination' | 'text' | 'message_type'
  | 'validity_period' | 'seq'> & RegulatoryColumns & { attempts: number };

export function toMovable(r: MovableRow): MovableMessage {
  const regulatory = regulatoryIds(r);
  return {
    id: r.id,
    client: r.client,
    upstream: r.upstream,
    route: r.route,
    source: r.source,
    destination: r.destination,
    text: r.text,
    messageType: r.message_type,
    validityPeriod: r.validity_period,
    ...(Object.keys(regulatory).length > 0 ? { regulatory } : {}),
    attempts: r.attempts,
    seq: Number(r.seq),
  };
}

/** Each move has parts, and names its message once; throws INTERNAL (a caller's bug) otherwise. */
export function checkMoves(moves: readonly MessageMove[]): void {
  const seen = new Set<string>();
  for (const m of moves) {
    if (m.parts.length === 0) throw new SmppdError(ErrorCode.INTERNAL, `move: message ${m.id} has no parts`, { messageId: m.id });
    if (seen.has(m.id)) throw new SmppdError(ErrorCode.INTERNAL, `move: message ${m.id} is named twice`, { messageId: m.id });
    seen.add(m.id);
  }
}

/** A part of a message about to move, as the move reads it (in PostgreSQL under its row lock). */
export interface MovingPartRow {
  part: number;
  upstream: string;
  state: PartState;
  attempts: number;
  not_before: number | null;
  held: number;
  expires_at: number | null;
}

/** What every new part of a moved message keeps of the old ones. */
export interface CarriedOver {
  /** The old parts' highest: a resend after an uncertain outcome counts on the new upstream too. */
  attempts: number;
  /** The first part's, which decides when a claim may take the message (a retry time): passed, or it would not move. */
  not_before: number | null;
  /** Whether its batch or schedule holds it: the same for every part of a message, and 0 (a held message does not move). */
  held: number;
}

/**
 * Whether a claim could take a message whose parts are all queued at `now`, decided on its first
 * part as `claim` decides (`../sqlite/claim.ts`, `../postgres/claim.ts`): not held, its not-before
 * time passed, not expired (expiry fails a part once `expires_at` < now).
 */
export function claimableNow(first: Pick<MovingPartRow, 'held' | 'not_before' | 'expires_at'>, now: number): boolean {
  return first.held === 0 && (first.not_before === null || first.not_before <= now) && (first.expires_at === null || first.expires_at >= now);
}

/**
 * What the new parts keep of `parts` (the message's, in part order), or null when the message may
 * not move: it is no longer on `from` (moved already), a part has left the queue (claimed, sent,
 * ended), or a claim could not take it at `now` (paused, not yet released or due, expired). Its
 * parts all queued, the message has no outcome and no receipt to lose.
 */
export function carriedOver(messageUpstream: string, parts: readonly MovingPartRow[], from: string, now: number): CarriedOver | null {
  const first = parts[0];
  if (first === undefined || messageUpstream !== from || !claimableNow(first, now)) return null;
  if (parts.some((p) => p.state !== 'queued' || p.upstream !== from)) return null;
  return { attempts: Math.max(...parts.map((p) => p.attempts)), not_before: first.not_before, held: first.held };
}
