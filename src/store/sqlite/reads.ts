/** Reads of messages and of the store's sizes. */
import type { MessageView, StoreCounts } from '../store.js';
import { loadMessage, PART_SELECT } from './part-status.js';
import { toPartView, type PartRow } from './rows.js';
import type { Sql } from './sql.js';

export function getMessage(sql: Sql, messageId: string): MessageView | undefined {
  const m = loadMessage(sql, messageId);
  if (!m) return undefined;
  const parts = sql.all<PartRow>(`${PART_SELECT} WHERE message_id = ? ORDER BY part`, messageId);
  return {
    messageId: m.id,
    client: m.client,
    upstream: m.upstream,
    batchId: m.batch_id,
    source: m.source,
    destination: m.destination,
    status: m.status,
    reason: m.reason,
    createdAt: m.created_at,
    updatedAt: m.updated_at,
    parts: parts.map(toPartView),
  };
}

export function queueDepth(sql: Sql): number {
  return sql.get<{ n: number }>("SELECT COUNT(*) AS n FROM parts WHERE state = 'queued'")?.n ?? 0;
}

export function counts(sql: Sql): StoreCounts {
  const states = sql.all<{ state: string; n: number }>(
    "SELECT state, COUNT(*) AS n FROM parts WHERE state IN ('queued', 'inflight') GROUP BY state",
  );
  const byState = new Map(states.map((r) => [r.state, r.n]));
  const parked = sql.get<{ n: number }>('SELECT COUNT(*) AS n FROM parked_receipts')?.n ?? 0;
  const outbox = sql.get<{ n: number }>("SELECT COUNT(*) AS n FROM outbox WHERE state IN ('pending', 'blocked')")?.n ?? 0;
  const deadEvents = sql.get<{ n: number }>("SELECT COUNT(*) AS n FROM outbox WHERE state = 'dead'")?.n ?? 0;
  return { queued: byState.get('queued') ?? 0, inflight: byState.get('inflight') ?? 0, parked, outbox, deadEvents };
}
