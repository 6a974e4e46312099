/**
 * The store conformance scenarios of batches and schedules (test/support/store-conformance/batches-schedules.ts) on
 * PostgresStore. One file per area, so the areas run in parallel. Skipped without SMPPD_TEST_PG_URL.
 */
import { describeBatchesAndSchedules } from '../../support/store-conformance/batches-schedules.js';
import { describePg, postgresHarness } from './pg-store.js';

describePg('PostgresStore', () => describeBatchesAndSchedules(postgresHarness));
