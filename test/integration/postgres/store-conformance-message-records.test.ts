/**
 * The store conformance scenarios of message records (test/support/store-conformance/message-records.ts)
 * on PostgresStore. One file per area, so the areas run in parallel. Skipped without SMPPD_TEST_PG_URL.
 */
import { describeMessageRecords } from '../../support/store-conformance/message-records.js';
import { describePg, postgresHarness } from './pg-store.js';

describePg('PostgresStore', () => describeMessageRecords(postgresHarness));
