/** Reads of messages and of the store's sizes. */
import type { QueueDepth } from '../intake.js';
import { toMessageView, type PartRow } from '../rows.js';
import type { MessageView, StoreCounts } from '../status-reads.js';
import { loadMessage, PART_SELECT } from './part-status.js';
import type { Sql } from './sql.js';

export function getMessage(sql: Sql, messageId: string): MessageView | undefined {
  const m = loadMessage(sql, messageId);
  if (!m) return undefined;
  return toMessageView(m, sql.all<PartRow>(`${PART_SELECT} WHERE message_id = ? ORDER BY part`, messageId));
}

/** One walk of parts_state's queued range, which holds each part's client: the total is their sum. */
export const QUEUE_DEPTH_SQL = "SELECT client, COUNT(*) AS queued FROM parts INDEXED BY parts_state WHERE state = 'queued' GROUP BY client";

export function queueDepth(sql: Sql): QueueDepth {
  const byClient = sql.all<{ client: string; queued: number }>(QUEUE_DEPTH_SQL);
  return { queued: byClient.reduce((n, c) => n + c.queued, 0), byClient };
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

/** A message's status and when it was stored and last changed (ms). */
export interface MessageTimes {
  status: string;
  createdAt: number;
  updatedAt: number;
}

/**
 * Every message's status and times, in the order stored: what the benchmark reads of a store it
 * filled (a bulk upload's ids are not in its answer). Reads the whole table: not for a daemon's store.
 */
export function messageTimes(sql: Sql): MessageTimes[] {
  return sql.all<MessageTimes>('SELECT status, created_at AS createdAt, updated_at AS updatedAt FROM messages ORDER BY seq');
}
