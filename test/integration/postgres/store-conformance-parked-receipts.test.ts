/**
 * The store conformance scenarios of the bounded receipt parking (test/support/store-conformance/parked-receipts.ts) on
 * PostgresStore. One file per area, so the areas run in parallel. Skipped without SMPPD_TEST_PG_URL.
 */
import { describeParkedReceipts } from '../../support/store-conformance/parked-receipts.js';
import { describePg, postgresHarness } from './pg-store.js';

describePg('PostgresStore', () => describeParkedReceipts(postgresHarness));
