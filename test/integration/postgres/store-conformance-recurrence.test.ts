/**
 * The store conformance scenarios of recurring schedules (test/support/store-conformance/recurrence.ts) on
 * PostgresStore. One file per area, so the areas run in parallel. Skipped without SMPPD_TEST_PG_URL.
 */
import { describeRecurringSchedules } from '../../support/store-conformance/recurrence.js';
import { describePg, postgresHarness } from './pg-store.js';

describePg('PostgresStore', () => describeRecurringSchedules(postgresHarness));
