/**
 * The store conformance scenarios of accept and claim (test/support/store-conformance/accept-claim.ts) on
 * PostgresStore. One file per area, so the areas run in parallel. Skipped without SMPPD_TEST_PG_URL.
 */
import { describeAcceptAndClaim } from '../../support/store-conformance/accept-claim.js';
import { describePg, postgresHarness } from './pg-store.js';

describePg('PostgresStore', () => describeAcceptAndClaim(postgresHarness));
