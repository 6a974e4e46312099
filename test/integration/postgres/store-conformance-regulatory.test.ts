/**
 * The store conformance scenarios of the regulatory ids (test/support/store-conformance/regulatory.ts)
 * on PostgresStore. Skipped without SMPPD_TEST_PG_URL.
 */
import { describeRegulatory } from '../../support/store-conformance/regulatory.js';
import { describePg, postgresHarness } from './pg-store.js';

describePg('PostgresStore', () => describeRegulatory(postgresHarness));
