/**
 * Failover: the queued messages of an upstream, and their move to another upstream with parts
 * composed again for it (`../rerouting.ts`; which messages may move: `../rules/rerouting.ts`).
 * A message moves with its parts deleted and inserted again: their number may change, and every
 * index a claim, a count or a receipt reads follows the rows. Its batch counts messages, not
 * parts, and a moved message stays one message of it.
 */
import type { MessageMove, MovableMessage } from '../rerouting.js';
import { carriedOver, checkMoves, toMovable, type MovableRow, type MovingPartRow } from '../rules/rerouting.js';
import { packTlvs } from '../rules/regulatory.js';
import type { MessageRow } from '../rows.js';
import type { Sql } from './sql.js';

/**
 * The queued first parts of `upstream` that a claim could take now (not held, due, not expired:
 * `claim.ts`), in message order (parts_movable, which holds no held part and filters on its own
 * columns before a row is read), whose message has no part out of the queue: the NOT EXISTS reads
 * each candidate's few parts by the primary key. Parameters: upstream, after, now, now, limit.
 */
export const MOVABLE_SQL = `SELECT m.id, m.seq, m.client, m.upstream, m.route, m.source, m.destination, m.text, m.message_type, m.validity_period,
    m.pe_id, m.template_id, m.telemarketer_id,
    (SELECT MAX(q.attempts) FROM parts q WHERE q.message_id = p.message_id) AS attempts
  FROM parts p INDEXED BY parts_movable JOIN messages m ON m.id = p.message_id
  WHERE p.upstream = ? AND p.state = 'queued' AND p.part = 1 AND p.held = 0 AND p.message_seq > ?
    AND (p.not_before IS NULL OR p.not_before <= ?)
    AND (p.expires_at IS NULL OR p.expires_at >= ?)
    AND NOT EXISTS (SELECT 1 FROM parts q WHERE q.message_id = p.message_id AND +q.state <> 'queued')
  ORDER BY p.message_seq
  LIMIT ?`;

export function movable(sql: Sql, upstream: string, limit: number, now: number, after = 0): MovableMessage[] {
  if (limit <= 0) return [];
  return sql.all<MovableRow>(MOVABLE_SQL, upstream, after, now, now, Math.floor(limit)).map(toMovable);
}

type MovingMessageRow = Pick<MessageRow, 'seq' | 'client' | 'upstream' | 'batch_id' | 'expires_at'>;

const MESSAGE_SQL = 'SELECT seq, client, upstream, batch_id, expires_at FROM messages WHERE id = ?';
const PARTS_SQL = 'SELECT part, upstream, state, attempts, not_before, held, expires_at FROM parts WHERE message_id = ? ORDER BY part';
const DELETE_PARTS_SQL = 'DELETE FROM parts WHERE message_id = ?';
const INSERT_PART_SQL = `INSERT INTO parts (message_id, part, message_seq, upstream, client, batch_id, expires_at, held, data_coding, esm_class,
    short_message, sar_ref, sar_total, sar_seq, payload, state, status, attempts, not_before, updated_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', 'SUBMITTED', ?, ?, ?)`;
const UPDATE_MESSAGE_SQL = `UPDATE messages SET upstream = ?, encoding = ?, registered_delivery = ?, source_ton = ?, source_npi = ?,
    vendor_tlvs = ?
  WHERE id = ?`;

/** `MessageRerouting.move`, in the caller's transaction. */
export function move(sql: Sql, moves: readonly MessageMove[], now: number): string[] {
  checkMoves(moves);
  const moved: string[] = [];
  for (const mv of moves) {
    const message = sql.get<MovingMessageRow>(MESSAGE_SQL, mv.id);
    if (!message) continue;
    const kept = carriedOver(message.upstream, sql.all<MovingPartRow>(PARTS_SQL, mv.id), mv.from, now);
    if (kept === null) continue;
    sql.run(DELETE_PARTS_SQL, mv.id);
    mv.parts.forEach((p, i) => {
      sql.run(
        INSERT_PART_SQL,
        mv.id, i + 1, message.seq, mv.upstream, message.client, message.batch_id, message.expires_at, kept.held, p.dataCoding, p.esmClass,
        p.shortMessage, p.sar?.refNum ?? null, p.sar?.total ?? null, p.sar?.seq ?? null, p.messagePayload ?? null,
        kept.attempts, kept.not_before, now,
      );
    });
    sql.run(UPDATE_MESSAGE_SQL, mv.upstream, mv.encoding, mv.registeredDelivery, mv.sourceTon, mv.sourceNpi, packTlvs(mv.vendorTlvs), mv.id);
    // Its status rows changed beside the memory of them (`status-cache.ts`). A message with every
    // part queued is not kept there now (a requeue forgets it); forgotten all the same, so that a
    // change to what is kept cannot leave the old parts in memory. A queued part has no match
    // key, so no parked receipt waits on the rows that went (`parked-keys.ts`).
    sql.statuses.forget(mv.id);
    moved.push(mv.id);
  }
  return moved;
}
