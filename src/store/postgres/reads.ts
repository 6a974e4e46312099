/** Reads of messages and of the store's sizes (every instance's). */
import { toMessageView, type MessageViewRow, type PartViewRow } from '../rows.js';
import type { MessageView, StoreCounts } from '../store.js';
import type { Queryable } from './db.js';

const MESSAGE_SQL = 'SELECT id, client, upstream, batch_id, source, destination, status, reason, created_at, updated_at FROM messages WHERE id = $1';
const PARTS_SQL = 'SELECT part, status, smsc_id, reason, attempts, updated_at FROM parts WHERE message_id = $1 ORDER BY part';

/** In one snapshot (`db` is a read transaction): the message's status and its parts' agree. */
export async function getMessage(db: Queryable, messageId: string): Promise<MessageView | undefined> {
  const m = await db.row<MessageViewRow>(MESSAGE_SQL, [messageId]);
  if (!m) return undefined;
  return toMessageView(m, await db.rows<PartViewRow>(PARTS_SQL, [messageId]));
}

export async function queueDepth(db: Queryable): Promise<number> {
  return (await db.row<{ n: number }>("SELECT COUNT(*) AS n FROM parts WHERE state = 'queued'"))?.n ?? 0;
}

export async function counts(db: Queryable): Promise<StoreCounts> {
  const row = await db.row<StoreCounts>(`SELECT
    (SELECT COUNT(*) FROM parts WHERE state = 'queued') AS queued,
    (SELECT COUNT(*) FROM parts WHERE state = 'inflight') AS inflight,
    (SELECT COUNT(*) FROM parked_receipts) AS parked,
    (SELECT COUNT(*) FROM outbox WHERE state IN ('pending', 'blocked')) AS outbox,
    (SELECT COUNT(*) FROM outbox WHERE state = 'dead') AS "deadEvents"`);
  return row ?? { queued: 0, inflight: 0, parked: 0, outbox: 0, deadEvents: 0 };
}
