/**
 * The store conformance scenarios of the retention sweep (test/support/store-conformance/retention.ts) on
 * PostgresStore. One file per area, so the areas run in parallel. Skipped without SMPPD_TEST_PG_URL.
 */
import { describeRetention } from '../../support/store-conformance/retention.js';
import { describePg, postgresHarness } from './pg-store.js';

describePg('PostgresStore', () => describeRetention(postgresHarness));
