/**
 * The store conformance scenarios of rerouting (test/support/store-conformance/rerouting.ts) on
 * PostgresStore. One file per area, so the areas run in parallel. Skipped without SMPPD_TEST_PG_URL.
 */
import { describeRerouting } from '../../support/store-conformance/rerouting.js';
import { describePg, postgresHarness } from './pg-store.js';

describePg('PostgresStore', () => describeRerouting(postgresHarness));
