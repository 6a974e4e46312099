/**
 * The store conformance scenarios of the admin reads (test/support/store-conformance/admin-reads.ts)
 * on PostgresStore. One file per area, so the areas run in parallel. Skipped without SMPPD_TEST_PG_URL.
 */
import { describeAdminReads } from '../../support/store-conformance/admin-reads.js';
import { describePg, postgresHarness } from './pg-store.js';

describePg('PostgresStore', () => describeAdminReads(postgresHarness));
