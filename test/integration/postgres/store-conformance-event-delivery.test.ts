/**
 * The store conformance scenarios of outbox delivery (test/support/store-conformance/event-delivery.ts) on
 * PostgresStore. One file per area, so the areas run in parallel. Skipped without SMPPD_TEST_PG_URL.
 */
import { describeEventDelivery } from '../../support/store-conformance/event-delivery.js';
import { describePg, postgresHarness } from './pg-store.js';

describePg('PostgresStore', () => describeEventDelivery(postgresHarness));
