/**
 * The store conformance scenarios of recovery and expiry (test/support/store-conformance/recovery-expiry.ts) on
 * PostgresStore. One file per area, so the areas run in parallel. Skipped without SMPPD_TEST_PG_URL.
 */
import { describeRecoveryAndExpiry } from '../../support/store-conformance/recovery-expiry.js';
import { describePg, postgresHarness } from './pg-store.js';

describePg('PostgresStore', () => describeRecoveryAndExpiry(postgresHarness));
