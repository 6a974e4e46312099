/**
 * The store conformance scenarios of inbound (MO) parts (test/support/store-conformance/inbound-parts.ts) on
 * PostgresStore. One file per area, so the areas run in parallel. Skipped without SMPPD_TEST_PG_URL.
 */
import { describeInboundParts } from '../../support/store-conformance/inbound-parts.js';
import { describePg, postgresHarness } from './pg-store.js';

describePg('PostgresStore', () => describeInboundParts(postgresHarness));
