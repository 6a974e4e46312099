/**
 * The scale-out benchmark's pure parts: the request it publishes is one the queue ingress takes,
 * and its figures come from the store's rows and the publish times as the table says.
 */
import { describe, expect, it } from 'vitest';
import { scaleOutBody, sumByLabel } from '../src/scaleout.js';
import type { BrokerFloorResult } from '../src/floor-broker.js';
import { deliveryFigures, type StoredMessage } from '../src/scaleout-store.js';
import type { StoreFloorResult } from '../src/floor-store.js';
import { renderBrokerFloorTable, renderFloorSummary, renderStoreFloorTable } from '../src/scaleout-table.js';
import { percentAtRate } from '../src/stats.js';
import { queueAccess, readSendMessage } from '../../src/ingress/amqp/index.js';

describe('scaleOutBody', () => {
  it('is a send request the queue ingress accepts, with a distinct destination that carries n and the caller reference', () => {
    const clients = new Map([['bench', { name: 'bench', token: 't'.repeat(24) }]]);
    for (const n of [0, 7, 123_456_789]) {
      const read = readSendMessage(scaleOutBody(n), {
        clients, access: queueAccess({ clients: ['bench'], client: 'bench' }), vouched: {}, maxBytes: 1 << 20, requestUri: 'amqp://q', now: 0,
      });
      expect(read.ok).toBe(true);
      if (!read.ok) continue;
      expect(read.reference).toBe(`bench-${n}`);
      expect(Number(read.request.destination.slice(-9))).toBe(n);
    }
  });
});

describe('deliveryFigures', () => {
  const publishedAt = Float64Array.from([1_000, 1_010, 1_020, 1_030]);
  const row = (n: number, status: string, createdAt: number, updatedAt: number): StoredMessage => ({ n, status, createdAt, updatedAt });

  it('measures publish → stored, accept → DELIVERED and publish → DELIVERED per request', () => {
    const f = deliveryFigures([row(0, 'DELIVERED', 1_100, 1_600), row(1, 'DELIVERED', 1_210, 1_310)], publishedAt);
    expect(f).toMatchObject({ stored: 2, storedTwice: 0, delivered: 2, notDelivered: {}, lastStoredAt: 1_210, lastDeliveredAt: 1_600 });
    expect(f.publishToStored).toEqual({ p50: 100, p99: 200, max: 200 });
    expect(f.acceptToDelivered).toEqual({ p50: 100, p99: 500, max: 500 });
    expect(f.publishToDelivered).toEqual({ p50: 300, p99: 600, max: 600 });
  });

  it('counts a request stored twice once, by its DELIVERED row, and reports the rest by status', () => {
    const f = deliveryFigures([
      row(0, 'SENT', 1_100, 1_200), row(0, 'DELIVERED', 1_150, 1_400),
      row(2, 'SUBMITTED', 1_300, 1_300), row(3, 'SENT', 1_330, 1_500),
    ], publishedAt);
    expect(f).toMatchObject({ stored: 3, storedTwice: 1, delivered: 1, notDelivered: { SUBMITTED: 1, SENT: 1 }, lastDeliveredAt: 1_400 });
    expect(f.publishToDelivered.max).toBe(400);
  });

  it('gives no latency when nothing was DELIVERED', () => {
    const f = deliveryFigures([row(1, 'SUBMITTED', 1_100, 1_100)], publishedAt);
    expect(f.delivered).toBe(0);
    expect(f.lastDeliveredAt).toBeNaN();
    expect(f.publishToDelivered.p50).toBeNaN();
  });
});

describe('sumByLabel', () => {
  it("sums a counter's samples by one label and ignores other metrics", () => {
    const text = [
      '# HELP smppd_receipts_total delivery receipts by result',
      'smppd_receipts_total{upstream="sim",result="matched"} 10',
      'smppd_receipts_total{upstream="other",result="matched"} 5',
      'smppd_receipts_total{upstream="sim",result="parked"} 2',
      'smppd_receipts_total_extra{upstream="sim",result="matched"} 99',
      'smppd_bind_submits_total{upstream="sim",bind="sim#1"} 7',
    ].join('\n');
    expect(sumByLabel(text, 'smppd_receipts_total', 'result')).toEqual({ matched: 15, parked: 2 });
    expect(sumByLabel(text, 'smppd_bind_submits_total', 'upstream')).toEqual({ sim: 7 });
  });
});

describe('the broker floor', () => {
  it('puts the machine CPU per message at the offered rate as % of one core', () => {
    expect(percentAtRate(188.5, 8000)).toBe(151);
    expect(percentAtRate(250, 8000)).toBe(200);
  });

  const floor: BrokerFloorResult = {
    case: 'scale-out: RabbitMQ alone', queue: 'q', consumers: 2, prefetch: 500, offeredRate: 8000, seconds: 10, loadAverage: 0.5,
    publish: {
      offered: 80000, published: 80000, confirmed: 80000, nacked: 0, skipped: 0, unconfirmed: 0, writeBufferFull: 0, blocked: 0,
      publishedPerSecond: 7999, confirmedPerSecond: 7985.2, confirmP50Ms: 7.7, confirmP99Ms: 266.6, confirmMaxMs: 300, channels: 4,
    },
    consumed: 80000, consumedPerSecond: 7980.8, ackFramesPerMessage: 0.05, outcome: 'all consumed',
    cpuPercent: { rabbitmq: 87, consumers: 39, bench: 21, machine: 149, others: 2 },
    cpuUsPerMessage: { rabbitmq: 109.8, consumers: 48.9, bench: 26.3, machine: 188.5 },
    machinePercentAtOffered: 151, cleanupProblems: [],
  };

  it('renders a column per case, and a failed case with its error in the outcome row and its clean-up problems below', () => {
    const table = renderBrokerFloorTable([floor, { case: 'broken', error: 'the floor consumer exited with 3 before it was ready', cleanupProblems: ['could not delete queue q'] }]);
    const lines = table.split('\n');
    expect(lines[0]).toBe('|  | scale-out: RabbitMQ alone | broken |');
    expect(lines).toContain('| CPU µs per message: rabbitmq / consumers / bench / machine | 109.8 / 48.9 / 26.3 / 188.5 | – |');
    expect(lines).toContain('| machine CPU % at the offered rate (of 200) | 151 | – |');
    expect(lines).toContain('| basic.ack frames a message | 0.05 | – |');
    expect(lines).toContain('| outcome | all consumed | failed: the floor consumer exited with 3 before it was ready |');
    expect(lines.at(-1)).toBe('- broken: clean-up: could not delete queue q');
  });

  const store: StoreFloorResult = {
    case: 'scale-out: PostgreSQL alone', schema: 's', messages: 80000, batch: 500, clients: 4, offeredRate: 8000, delivered: 80000,
    commitsPerMessage: 0.004, seconds: 1.53, messagesPerSecond: 52127, cpuUsPerMessage: { postgres: 28.1, bench: 5.3 },
    postgresPercentAtOffered: 22, cleanupProblems: [],
  };

  it('renders the PostgreSQL floor, with its outcome from the rows DELIVERED', () => {
    const lines = renderStoreFloorTable([store, { ...store, case: 'short', delivered: 79990 }]).split('\n');
    expect(lines).toContain('| CPU µs per message: postgres / bench | 28.1 / 5.3 | 28.1 / 5.3 |');
    expect(lines).toContain('| postgres CPU % at the scale-out rate (of 200) | 22 (at 8000/s) | 22 (at 8000/s) |');
    expect(lines).toContain('| outcome | all DELIVERED | 10 not DELIVERED |');
  });

  it('sums the two floors at the offered rate, only when both ran whole at the same rate on this machine', () => {
    expect(renderFloorSummary([floor], [store], 2)).toBe(
      "floors at 8000/s: the broker with its publisher and consumers 151 % + PostgreSQL's least writes 22 % = 173 % of 200 (2 cores), before the simulator and smppd's own work");
    expect(renderFloorSummary([floor], [{ ...store, offeredRate: 4000 }], 2)).toBe('');
    expect(renderFloorSummary([floor], [{ ...store, postgresPercentAtOffered: null }], 2)).toBe('');
    expect(renderFloorSummary([{ ...floor, outcome: 'gave up' }], [store], 2)).toBe('');
    expect(renderFloorSummary([], [store], 2)).toBe('');
  });
});
