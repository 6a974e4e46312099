import { describe, expect, it } from 'vitest';
import { Metrics } from '../../../src/observability/metrics.js';

describe('Metrics of webhook delivery', () => {
  it('counts attempts by result, dead and superseded events, times requests and deliveries, and reads the outbox at scrape time', async () => {
    let depth = [{ client: 'shop', pending: 7, dead: 2 }];
    const m = new Metrics(() => [], { processMetrics: false, readOutbox: async () => depth });
    m.webhookAttempt('shop', 'ok', 0.004);
    m.webhookAttempt('shop', 'timeout', 10);
    m.webhookAttempt('shop', 'status', 0.01);
    m.eventDelivered('shop', 'status', 1.5);
    m.eventDead('shop');
    m.eventsSuperseded(3);
    expect(await m.value('smppd_webhook_attempts_total', { client: 'shop' })).toBe(3);
    expect(await m.value('smppd_webhook_attempts_total', { result: 'timeout' })).toBe(1);
    expect(await m.value('smppd_events_dead_total')).toBe(1);
    expect(await m.value('smppd_events_superseded_total')).toBe(3);
    expect(await m.value('smppd_outbox_depth', { client: 'shop' })).toBe(7);
    expect(await m.value('smppd_outbox_dead', { client: 'shop' })).toBe(2);
    depth = [{ client: 'shop', pending: 0, dead: 0 }];
    expect(await m.value('smppd_outbox_depth', { client: 'shop' })).toBe(0);
    const text = await m.registry.metrics();
    expect(text).toContain('smppd_event_delivery_seconds_count{client="shop",kind="status"} 1');
    expect(text).toContain('smppd_webhook_request_seconds_count{client="shop"} 3');
  });
});

describe('Metrics of binds', () => {
  it('counts the slots of accepted parts not stored yet as taken, and shows them apart', async () => {
    const bind = { id: 'sim#0', upstream: 'sim', state: 'bound', outstanding: 3, held: 2, window: 10, rate: 0, tokens: 0, submitted: 40, throttleEpisodes: 0, learnedLimit: null, throttledSubmits: 0, reconnects: 0 };
    const m = new Metrics(() => [bind], { processMetrics: false });
    expect(await m.value('smppd_bind_window_in_use', { bind: 'sim#0' })).toBe(5);
    expect(await m.value('smppd_bind_window_held', { bind: 'sim#0' })).toBe(2);
    expect(await m.value('smppd_bind_window_size', { bind: 'sim#0' })).toBe(10);
  });

  it('shows the pacing each bind and account found: rate in force, learned limit, throttled submits', async () => {
    const bind = { id: 'sim#0', upstream: 'sim', state: 'bound', outstanding: 0, held: 0, window: 10, rate: 485, tokens: 3, submitted: 9_000, throttleEpisodes: 4, learnedLimit: 500, throttledSubmits: 61, reconnects: 0 };
    const m = new Metrics(() => [bind, { ...bind, id: 'sim#1', learnedLimit: null, rate: 1000 }], {
      processMetrics: false, readAccounts: () => [{ upstream: 'sim', share: 1000, rate: 873, learnedLimit: 900 }],
    });
    expect(await m.value('smppd_bind_rate_per_second', { bind: 'sim#0' })).toBe(485);
    expect(await m.value('smppd_bind_learned_limit_per_second', { bind: 'sim#0' })).toBe(500);
    expect(await m.value('smppd_bind_learned_limit_per_second', { bind: 'sim#1' })).toBe(0);
    expect(await m.value('smppd_bind_throttled_total', { bind: 'sim#0' })).toBe(61);
    expect(await m.value('smppd_account_share_per_second', { upstream: 'sim' })).toBe(1000);
    expect(await m.value('smppd_account_rate_per_second', { upstream: 'sim' })).toBe(873);
    expect(await m.value('smppd_account_learned_limit_per_second', { upstream: 'sim' })).toBe(900);
  });
});

describe('Metrics of the store and the records', () => {
  it('counts store errors by operation, records written and failed appends, and reads the records pending at scrape time', async () => {
    let pending = 12;
    const m = new Metrics(() => [], { processMetrics: false, readRecords: async () => pending });
    m.storeError('accept');
    m.storeError('accept');
    m.storeError('takeRecords');
    m.recordsWritten(500);
    m.recordsWritten(3);
    m.recordWriteFailed();
    expect(await m.value('smppd_store_errors_total', { operation: 'accept' })).toBe(2);
    expect(await m.value('smppd_store_errors_total')).toBe(3);
    expect(await m.value('smppd_records_written_total')).toBe(503);
    expect(await m.value('smppd_record_write_errors_total')).toBe(1);
    expect(await m.value('smppd_records_pending')).toBe(12);
    pending = 0;
    expect(await m.value('smppd_records_pending')).toBe(0);
  });

  it('declares no records gauge without a reader of it', async () => {
    const m = new Metrics(() => [], { processMetrics: false });
    expect(m.registry.getSingleMetric('smppd_records_pending')).toBeUndefined();
  });
});
