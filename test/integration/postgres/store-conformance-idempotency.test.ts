/**
 * The store conformance scenarios of idempotency keys (test/support/store-conformance/idempotency.ts)
 * on PostgresStore. One file per area, so the areas run in parallel. Skipped without SMPPD_TEST_PG_URL.
 */
import { describeIdempotencyKeys } from '../../support/store-conformance/idempotency.js';
import { describePg, postgresHarness } from './pg-store.js';

describePg('PostgresStore', () => describeIdempotencyKeys(postgresHarness));
