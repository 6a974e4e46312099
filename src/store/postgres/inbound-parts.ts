/**
 * The parts of concatenated MO messages, as in the SQLite store (what the rows mean:
 * `../rules/inbound-parts.ts`). The parts of one message may come in on the binds of several
 * instances at once: each part's transaction, and the sweep that stores a message incomplete,
 * first take the message's advisory lock (`LockSpaces.inbound`), so the count of its parts that a
 * transaction reads after the lock includes every part committed before it, and exactly one
 * transaction (the one that commits the last part) assembles the message.
 */
import type { ExpiredInbound, InboundPartOutcome, InboundPartRecord, InboundRecord } from '../inbound.js';
import {
  assembleRows, compareWithStored, digestsOf, expired, inboundPartsSql, KEY_COLUMNS, keyParams, keyText, partParams, type InboundKey, type InboundPartRow,
} from '../rules/inbound-parts.js';
import type { Tx } from './db.js';
import type { LockSpaces } from './locks.js';
import { recordInbound } from './outbox.js';

const SQL = inboundPartsSql((n) => `$${n}`);
const LOCK_SQL = 'SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))';
/** The locks of several messages, in the order of their hashes (as `receiptKeyLocksSql`): two sweeps never deadlock. */
const LOCK_MANY_SQL = `SELECT count(pg_advisory_xact_lock(hashtext($1), s.h)) AS locked FROM (
  SELECT DISTINCT hashtext(k) AS h FROM unnest($2::text[]) AS k ORDER BY 1) AS s`;
const STALE_KEYS_SQL = `SELECT ${KEY_COLUMNS}, min(received_at) AS first_at
  FROM inbound_parts WHERE received_at < $1
  GROUP BY ${KEY_COLUMNS} ORDER BY first_at LIMIT $2`;

export async function recordInboundPart(tx: Tx, spaces: LockSpaces, part: InboundPartRecord): Promise<InboundPartOutcome> {
  const key = keyParams(part);
  tx.send(LOCK_SQL, [spaces.inbound, keyText(part)]);
  const stored = await tx.row<{ digests: Buffer }>(SQL.selectAssembled, key);
  if (stored) {
    const seen = compareWithStored(stored.digests, part.piece.seq, part.piece.body);
    if (seen === 'repeat') return { kind: 'repeat' };
    if (seen === 'other') tx.send(SQL.deleteAssembled, key);
  }
  if (await tx.run(SQL.insertPart, partParams(part)) === 0) return { kind: 'repeat' };
  const parts = Number((await tx.row<{ n: number }>(SQL.countParts, key))?.n ?? 0);
  if (parts < part.total) return { kind: 'held', parts };
  const rows = await tx.rows<InboundPartRow>(SQL.selectParts, key);
  return { kind: 'stored', inboundId: (await storeMessage(tx, rows)).inboundId, parts };
}

export async function expireInboundParts(tx: Tx, spaces: LockSpaces, before: number, limit: number): Promise<ExpiredInbound[]> {
  const stale = await tx.rows<InboundKey>(STALE_KEYS_SQL, [before, Math.max(1, Math.floor(limit))]);
  if (stale.length > 0) tx.send(LOCK_MANY_SQL, [spaces.inbound, stale.map(keyText)]);
  // After the locks, as a part's transaction takes its lock before it touches its message's row
  // in inbound_assembled: holding a row a part's transaction then wants while waiting for that
  // part's lock would deadlock.
  tx.send(SQL.forget, [before]);
  if (stale.length === 0) return [];
  const out: ExpiredInbound[] = [];
  for (const k of stale) {
    // Read again under the lock: the last part may have come (and the message been stored) since.
    const rows = await tx.rows<InboundPartRow>(SQL.selectParts, keyParams(k));
    if (!rows.some((r) => r.received_at < before)) continue;
    const { inboundId, record } = await storeMessage(tx, rows);
    out.push(expired(inboundId, record));
  }
  return out;
}

/** Stores the message the rows of one key make, with its event; removes its parts and keeps their digests. */
async function storeMessage(tx: Tx, rows: InboundPartRow[]): Promise<{ inboundId: number; record: InboundRecord }> {
  const first = rows[0]!;
  const record = assembleRows(rows);
  const inboundId = await recordInbound(tx, record);
  const key = keyParams(first);
  tx.send(SQL.deleteParts, key);
  tx.send(SQL.remember, [...key, digestsOf(first.total, rows), record.receivedAt]);
  return { inboundId, record };
}
