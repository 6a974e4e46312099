/**
 * Failover, as in the SQLite store (`../sqlite/rerouting.ts`; the rules: `../rules/rerouting.ts`):
 * an upstream's queued messages listed, and moved to another upstream with their parts deleted
 * and inserted again, composed for it. What several instances add:
 *
 * - a claim on another instance: the move locks each message and all its parts (FOR UPDATE, in
 *   seq and part order, as every status change does) and decides on the rows as locked. A claim
 *   that took the message first has committed its parts inflight, and the move leaves it; a claim
 *   that comes after finds the message's first part locked and passes over it (SKIP LOCKED), and
 *   its next walk finds the new parts on the new upstream only;
 * - another move of the same message: the second finds the first's old parts gone, or the
 *   message on another upstream, and leaves it;
 * - a change of its batch (pause, abort, a schedule's release) writes `held` onto its parts under
 *   the batch's gate: the move takes the gates of its messages' batches first, so it decides on the
 *   batch's state as it is at the commit (a message paused since the list stays), and a change
 *   after it finds the new parts. It takes them in batch id order, as every taker of several gates
 *   does (`locks.ts`).
 */
import type { MessageMove, MovableMessage } from '../rerouting.js';
import { carriedOver, checkMoves, toMovable, type CarriedOver, type MovableRow, type MovingPartRow } from '../rules/rerouting.js';
import { packTlvs } from '../rules/regulatory.js';
import type { MessageRow } from '../rows.js';
import type { Queryable, Tx } from './db.js';
import type { LockSpaces } from './locks.js';
import { plannedEachRun } from './statements.js';

/**
 * The queued first parts of upstream $1 that a claim could take at $4 (not held, due, not expired:
 * `claim.ts`), in message order (parts_movable, which holds no held part), whose message has every
 * part queued: one probe of the primary key per candidate (a lateral aggregate, not a NOT EXISTS,
 * which the planner may turn into an anti join over every part: `claim.ts`). Planned each run: a
 * rare statement, whose generic plan would be made for the table as it was at its first runs.
 */
export const MOVABLE_SQL = plannedEachRun(`SELECT m.id, m.seq, m.client, m.upstream, m.route, m.source, m.destination, m.text, m.message_type,
    m.validity_period, m.pe_id, m.template_id, m.telemarketer_id, a.attempts
  FROM parts p
    CROSS JOIN LATERAL (SELECT max(q.attempts) AS attempts, bool_and(q.state = 'queued') AS queued FROM parts q
      WHERE q.message_id = p.message_id) a
    JOIN messages m ON m.id = p.message_id
  WHERE p.upstream = $1 AND p.state = 'queued' AND p.part = 1 AND p.held = 0 AND p.message_seq > $3
    AND (p.not_before IS NULL OR p.not_before <= $4)
    AND (p.expires_at IS NULL OR p.expires_at >= $4)
    AND a.queued
  ORDER BY p.message_seq
  LIMIT $2`);

export async function movable(db: Queryable, upstream: string, limit: number, now: number, after = 0): Promise<MovableMessage[]> {
  if (limit <= 0) return [];
  return (await db.rows<MovableRow>(MOVABLE_SQL, [upstream, Math.floor(limit), after, now])).map(toMovable);
}

/** The statements of a move, named so a test can hold their query plans. */
export const MOVE_SQL = {
  /** The gates of the messages' batches (`locks.ts`, `lockBatchGate`'s keys), in batch id order: two moves never deadlock on them. */
  lockGates: `SELECT count(pg_advisory_xact_lock(hashtext($1), (b.batch_id % 2147483647)::int)) AS locked FROM (
    SELECT DISTINCT batch_id FROM messages WHERE id = ANY($2::text[]) AND batch_id IS NOT NULL ORDER BY 1) AS b`,
  /**
   * The messages and all their parts, locked in seq and part order (as `part-status.ts`'s LOCK_SQL);
   * `expires_at` is the message's, which its parts repeat.
   */
  lock: plannedEachRun(`SELECT m.id, m.seq, m.client, m.upstream AS message_upstream, m.batch_id, m.expires_at,
    p.part, p.upstream, p.state, p.attempts, p.not_before, p.held
  FROM messages m JOIN parts p ON p.message_id = m.id
  WHERE m.id = ANY($1::text[])
  ORDER BY m.seq, p.part
  FOR UPDATE OF m, p`),
  deleteParts: 'DELETE FROM parts WHERE message_id = ANY($1::text[])',
  insertParts: `INSERT INTO parts (message_id, part, message_seq, upstream, client, batch_id, expires_at, held, data_coding, esm_class,
    short_message, sar_ref, sar_total, sar_seq, payload, state, status, attempts, not_before, updated_at)
  SELECT u.message_id, u.part, u.message_seq, u.upstream, u.client, u.batch_id, u.expires_at, u.held, u.data_coding, u.esm_class,
    u.short_message, u.sar_ref, u.sar_total, u.sar_seq, u.payload, 'queued', 'SUBMITTED', u.attempts, u.not_before, $1
  FROM unnest($2::text[], $3::int[], $4::bigint[], $5::text[], $6::text[], $7::bigint[], $8::bigint[], $9::smallint[], $10::int[],
    $11::int[], $12::bytea[], $13::int[], $14::int[], $15::int[], $16::bytea[], $17::int[], $18::bigint[])
    AS u(message_id, part, message_seq, upstream, client, batch_id, expires_at, held, data_coding, esm_class, short_message, sar_ref,
      sar_total, sar_seq, payload, attempts, not_before)`,
  /** Planned each run, as the flush of status writes (`writes.ts`): the arrays joined by the key. */
  updateMessages: plannedEachRun(`UPDATE messages m SET upstream = u.upstream, encoding = u.encoding,
    registered_delivery = u.registered_delivery, source_ton = u.source_ton, source_npi = u.source_npi, vendor_tlvs = u.vendor_tlvs
  FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::int[], $6::int[], $7::bytea[])
    AS u(id, upstream, encoding, registered_delivery, source_ton, source_npi, vendor_tlvs)
  WHERE m.id = u.id`),
} as const;

type LockedRow = MovingPartRow & Pick<MessageRow, 'id' | 'seq' | 'client' | 'batch_id' | 'expires_at'> & { message_upstream: string };

/** A message as locked for its move, and what its new parts keep of the old. */
interface Moving {
  mv: MessageMove;
  message: LockedRow;
  kept: CarriedOver;
}

/** `MessageRerouting.move`, in one transaction. */
export async function move(tx: Tx, spaces: LockSpaces, moves: readonly MessageMove[], now: number): Promise<string[]> {
  checkMoves(moves);
  if (moves.length === 0) return [];
  const ids = moves.map((m) => m.id);
  tx.send(MOVE_SQL.lockGates, [spaces.batch, ids]);
  const byMessage = new Map<string, LockedRow[]>();
  for (const r of await tx.rows<LockedRow>(MOVE_SQL.lock, [ids])) {
    const rows = byMessage.get(r.id);
    if (rows === undefined) byMessage.set(r.id, [r]);
    else rows.push(r);
  }
  const moving: Moving[] = [];
  for (const mv of moves) {
    const rows = byMessage.get(mv.id);
    const message = rows?.[0];
    if (rows === undefined || message === undefined) continue;
    const kept = carriedOver(message.message_upstream, rows, mv.from, now);
    if (kept !== null) moving.push({ mv, message, kept });
  }
  if (moving.length === 0) return [];
  tx.send(MOVE_SQL.deleteParts, [moving.map((m) => m.mv.id)]);
  const parts = moving.flatMap((m) => m.mv.parts.map((p, i) => ({ ...m, p, part: i + 1 })));
  tx.send(MOVE_SQL.insertParts, [
    now, parts.map((x) => x.mv.id), parts.map((x) => x.part), parts.map((x) => x.message.seq), parts.map((x) => x.mv.upstream),
    parts.map((x) => x.message.client), parts.map((x) => x.message.batch_id), parts.map((x) => x.message.expires_at),
    parts.map((x) => x.kept.held), parts.map((x) => x.p.dataCoding), parts.map((x) => x.p.esmClass), parts.map((x) => x.p.shortMessage),
    parts.map((x) => x.p.sar?.refNum ?? null), parts.map((x) => x.p.sar?.total ?? null), parts.map((x) => x.p.sar?.seq ?? null),
    parts.map((x) => x.p.messagePayload ?? null), parts.map((x) => x.kept.attempts), parts.map((x) => x.kept.not_before),
  ]);
  await tx.run(MOVE_SQL.updateMessages, [
    moving.map((m) => m.mv.id), moving.map((m) => m.mv.upstream), moving.map((m) => m.mv.encoding),
    moving.map((m) => m.mv.registeredDelivery), moving.map((m) => m.mv.sourceTon), moving.map((m) => m.mv.sourceNpi),
    moving.map((m) => packTlvs(m.mv.vendorTlvs)),
  ]);
  return moving.map((m) => m.mv.id);
}
