/**
 * The behaviour every `Store` (src/store/store.ts) owes its callers, written once and run against
 * each implementation: test/unit/store/store-conformance.test.ts (SQLite) and
 * test/integration/postgres/store-conformance-*.test.ts (PostgreSQL, a file per area). A scenario added here runs for
 * both; what only one implementation has (SQLite's group commit and worker thread, PostgreSQL's
 * instances and locks, each one's migrations and query plans) stays in that implementation's tests.
 */
import { describeAcceptAndClaim } from './accept-claim.js';
import { describeAdminReads } from './admin-reads.js';
import { describeBatchesAndSchedules } from './batches-schedules.js';
import { describeEventDelivery } from './event-delivery.js';
import type { StoreFactory } from './harness.js';
import { describeIdempotencyKeys } from './idempotency.js';
import { describeInboundParts } from './inbound-parts.js';
import { describeMessageRecords } from './message-records.js';
import { describeParkedReceipts } from './parked-receipts.js';
import { describeRecoveryAndExpiry } from './recovery-expiry.js';
import { describeRecurringSchedules } from './recurrence.js';
import { describeRegulatory } from './regulatory.js';
import { describeRerouting } from './rerouting.js';
import { describeRetention } from './retention.js';
import { describeSubmitAndReceipts } from './submit-receipts.js';

/** Registers every conformance scenario, each on a fresh store from `factory`; call it inside a `describe`. */
export function describeStoreConformance(factory: StoreFactory): void {
  describeAcceptAndClaim(factory);
  describeBatchesAndSchedules(factory);
  describeRecurringSchedules(factory);
  describeSubmitAndReceipts(factory);
  describeParkedReceipts(factory);
  describeEventDelivery(factory);
  describeInboundParts(factory);
  describeRecoveryAndExpiry(factory);
  describeRetention(factory);
  describeRerouting(factory);
  describeIdempotencyKeys(factory);
  describeAdminReads(factory);
  describeMessageRecords(factory);
  describeRegulatory(factory);
}
