/**
 * The parts of concatenated MO messages (`Store.recordInboundPart`, `expireInboundParts`; what the
 * rows mean: `../rules/inbound-parts.ts`). One process writes the file, one transaction at a time:
 * a part and the count of its message's parts see each other without locks.
 */
import type { ExpiredInbound, InboundPartOutcome, InboundPartRecord, InboundRecord } from '../inbound.js';
import {
  assembleRows, compareWithStored, digestsOf, expired, inboundPartsSql, KEY_COLUMNS, keyParams, partParams, type InboundKey, type InboundPartRow,
} from '../rules/inbound-parts.js';
import { recordInbound } from './outbox.js';
import type { Sql } from './sql.js';

const SQL = inboundPartsSql(() => '?');
const STALE_KEYS = `SELECT ${KEY_COLUMNS}, min(received_at) AS first_at
  FROM inbound_parts INDEXED BY inbound_parts_received WHERE received_at < ?
  GROUP BY ${KEY_COLUMNS} ORDER BY first_at LIMIT ?`;

export function recordInboundPart(sql: Sql, part: InboundPartRecord): InboundPartOutcome {
  const key = keyParams(part);
  const stored = sql.get<{ digests: Buffer }>(SQL.selectAssembled, ...key);
  if (stored) {
    const seen = compareWithStored(stored.digests, part.piece.seq, part.piece.body);
    if (seen === 'repeat') return { kind: 'repeat' };
    if (seen === 'other') sql.run(SQL.deleteAssembled, ...key);
  }
  if (sql.run(SQL.insertPart, ...partParams(part)).changes === 0) return { kind: 'repeat' };
  const parts = sql.get<{ n: number }>(SQL.countParts, ...key)?.n ?? 0;
  if (parts < part.total) return { kind: 'held', parts };
  const { inboundId } = storeMessage(sql, sql.all<InboundPartRow>(SQL.selectParts, ...key));
  return { kind: 'stored', inboundId, parts };
}

export function expireInboundParts(sql: Sql, before: number, limit: number): ExpiredInbound[] {
  sql.run(SQL.forget, before);
  const out: ExpiredInbound[] = [];
  for (const k of sql.all<InboundKey>(STALE_KEYS, before, Math.max(1, Math.floor(limit)))) {
    const { inboundId, record } = storeMessage(sql, sql.all<InboundPartRow>(SQL.selectParts, ...keyParams(k)));
    out.push(expired(inboundId, record));
  }
  return out;
}

/** Stores the message the rows of one key make, with its event; removes its parts and keeps their digests. */
function storeMessage(sql: Sql, rows: InboundPartRow[]): { inboundId: number; record: InboundRecord } {
  const first = rows[0]!;
  const record = assembleRows(rows);
  const inboundId = recordInbound(sql, record);
  const key = keyParams(first);
  sql.run(SQL.deleteParts, ...key);
  sql.run(SQL.remember, ...key, digestsOf(first.total, rows), record.receivedAt);
  return { inboundId, record };
}
