/**
 * The store of smppd (DESIGN.md: "Nothing it has answered 200 for may ever be lost"), as a
 * back-end implements it: every role, and `close`. The SQLite store (`src/store/sqlite/`) is the
 * default; a PostgreSQL store (`src/store/postgres/`) implements the same interface for several
 * instances sharing one queue. SQL stays behind it: the other layers see these types only, and
 * each service takes the role it uses, not the whole store:
 *
 * - `MessageIntake` (intake.ts): accepting messages, the queue's depth for admission;
 * - `SubmitClaims` (claims.ts): claiming parts, recording submit outcomes, recovery and expiry;
 * - `ReceiptMatching` (receipts.ts): receipts matched or parked, the parking bounded;
 * - `InboundMessages` (inbound.ts): MO messages and the parts of concatenated ones;
 * - `BatchesAndSchedules` (batches.ts): batches and schedules read and steered;
 * - `EventOutbox` (outbox.ts): the outbox claimed and settled by the webhook dispatcher;
 * - `EventResends` (event-resends.ts): dead events and status events sent again;
 * - `RetentionPruning` (retention.ts): old, finished rows deleted;
 * - `StatusReads` (status-reads.ts): a message's status, counts and lag for metrics;
 * - `MessageRerouting` (rerouting.ts): queued messages moved to another upstream on failover;
 * - `IdempotencyKeys` (idempotency.ts): requests' keys and results, for answering their repeats;
 * - `UpstreamSuspensions` (upstream-suspensions.ts): upstreams an operator suspended;
 * - `MessageSearch` (message-search.ts): messages found across clients, and one message's story.
 *
 * Every write method resolves only after its transaction is committed (group commit: writes
 * that arrive within a few milliseconds share one transaction). Reads see every write whose
 * promise has resolved. Times are wall-clock milliseconds since the epoch (the caller's
 * `Clock.wallNow()`), never read by the store itself.
 */
import type { BatchesAndSchedules } from './batches.js';
import type { SubmitClaims } from './claims.js';
import type { EventResends } from './event-resends.js';
import type { IdempotencyKeys } from './idempotency.js';
import type { InboundMessages } from './inbound.js';
import type { MessageIntake } from './intake.js';
import type { EventOutbox } from './outbox.js';
import type { ReceiptMatching } from './receipts.js';
import type { MessageRerouting } from './rerouting.js';
import type { RetentionPruning } from './retention.js';
import type { StatusReads } from './status-reads.js';
import type { MessageSearch } from './message-search.js';
import type { UpstreamSuspensions } from './upstream-suspensions.js';

export interface Store extends
  MessageIntake, SubmitClaims, ReceiptMatching, InboundMessages, BatchesAndSchedules,
  EventOutbox, EventResends, RetentionPruning, StatusReads, MessageRerouting, IdempotencyKeys, UpstreamSuspensions, MessageSearch {
  /** Flushes pending writes and closes. */
  close(): Promise<void>;
}
