/**
 * The store conformance scenarios of submit outcomes, receipts and the outbox (test/support/store-conformance/submit-receipts.ts) on
 * PostgresStore. One file per area, so the areas run in parallel. Skipped without SMPPD_TEST_PG_URL.
 */
import { describeSubmitAndReceipts } from '../../support/store-conformance/submit-receipts.js';
import { describePg, postgresHarness } from './pg-store.js';

describePg('PostgresStore', () => describeSubmitAndReceipts(postgresHarness));
