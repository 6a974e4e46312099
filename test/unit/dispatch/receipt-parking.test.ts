/**
 * The parking of receipts that match no part, bounded: receipts with no id are never parked, and
 * each upstream keeps at most `max` parked receipts for at most `maxAgeMs`. Over a real SQLite
 * store; the daemon's time (receipt dates, the prune's timer) is a ManualClock.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { WarningThrottle } from '../../../src/core/warning-throttle.js';
import { Deliveries, type DeliveryCounters } from '../../../src/dispatch/deliveries.js';
import { ReceiptParking, PARKING_PRUNE_EVERY_MS, type ParkingCounters } from '../../../src/dispatch/receipt-parking.js';
import { submitSmDefaults, type DeliverSmPdu } from '../../../src/smpp/pdu.js';
import type { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { until } from '../../support/engine.js';
import { recordingLog } from '../../support/http.js';
import { newMessage, storeFolder, type StoreFolder } from '../../support/sqlite-store.js';

const deliverSm = (text: string): DeliverSmPdu => ({
  ...submitSmDefaults(), command: 'deliver_sm', sequenceNumber: 1, esmClass: 0x04, dataCoding: 0,
  sourceAddr: '4915112345678', destinationAddr: 'smppd', shortMessage: Buffer.from(text, 'latin1'),
});
const receipt = (id: string) => deliverSm(`id:${id} sub:001 dlvrd:001 submit date:2611231200 done date:2611231201 stat:DELIVRD err:000 text:hi`);

let folder: StoreFolder | undefined;
let parking: ReceiptParking | undefined;
afterEach(async () => {
  await parking?.stop();
  parking = undefined;
  await folder?.cleanup();
  folder = undefined;
});

async function harness(limits: { max: number; maxAgeMs: number }) {
  folder = storeFolder();
  const store: SqliteStore = await folder.open();
  const clock = new ManualClock(0, Date.UTC(2026, 10, 23, 12));
  const lines: string[] = [];
  const log = recordingLog(lines);
  const warnings = new WarningThrottle(clock, 60_000);
  const receipts = new Map<string, number>();
  const dropped = new Map<string, number>();
  const counters: DeliveryCounters & ParkingCounters = {
    receipt: (_u, result) => { receipts.set(result, (receipts.get(result) ?? 0) + 1); },
    inbound: () => {},
    parkedDropped: (upstream, reason, count) => { dropped.set(`${upstream} ${reason}`, (dropped.get(`${upstream} ${reason}`) ?? 0) + count); },
  };
  parking = new ReceiptParking({ store, clock, log, warnings, counters, upstreams: [{ upstream: 'up1', ...limits }] });
  const deliveries = new Deliveries({
    store, clock, log, counters, warnings, parking,
    upstreams: [{ name: 'up1', defaultAlphabet: 'gsm7', receiptIdFormat: 'same', smscTimeZone: 'UTC' }],
  });
  const parked = async () => (await store.counts()).parked;
  return { store, clock, lines, warnings, receipts, dropped, parking, deliveries, parked };
}

const warned = (lines: string[], event: string) => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['event'] === event);

describe('the receipt parking, bounded', () => {
  it('an SMSC that sends 1,000 receipts for ids never issued fills the parking to its max, no further; the oldest are dropped and counted', async () => {
    const h = await harness({ max: 100, maxAgeMs: 3_600_000 });
    h.parking.start();
    for (let burst = 0; burst < 10; burst++) {
      const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => h.deliveries.handle('up1', 'up1#0', receipt(`F${burst}${String(i).padStart(2, '0')}`))));
      expect(answers.every((status) => status === 0)).toBe(true);
      h.clock.advance(1); // each burst a millisecond later: the oldest are the first bursts
    }
    expect(h.receipts.get('parked')).toBe(1_000);
    // Pruned while they came (a tenth of max parked since the last prune starts one): never far past max.
    await until(async () => (h.dropped.get('up1 cap') ?? 0) + await h.parked() === 1_000, 5_000, 'every receipt parked or dropped');
    expect(await h.parked()).toBeLessThanOrEqual(100 + 10 + 100);
    // The periodic prune brings it to max exactly, keeping the newest.
    h.clock.advance(PARKING_PRUNE_EVERY_MS);
    await until(async () => await h.parked() === 100, 5_000, 'the parking at its max');
    expect(h.dropped.get('up1 cap')).toBe(900);
    await h.store.accept({ messages: [newMessage('newest', { upstream: 'up1' }), newMessage('oldest', { upstream: 'up1' })], now: h.clock.wallNow() });
    await h.store.claim('up1', h.clock.wallNow(), 10);
    await h.store.recordSubmit('newest', [{ part: 1, kind: 'accepted', smscId: 'F999', matchKey: 'f999', bind: 'up1#0', attempts: 1 }], h.clock.wallNow());
    await h.store.recordSubmit('oldest', [{ part: 1, kind: 'accepted', smscId: 'F000', matchKey: 'f000', bind: 'up1#0', attempts: 1 }], h.clock.wallNow());
    expect((await h.store.getMessage('newest'))?.status).toBe('DELIVERED');
    expect((await h.store.getMessage('oldest'))?.status).toBe('SENT');
    // Said, not once per prune: one warning at once, the next prunes' drops counted into one line at the interval's end.
    const said = warned(h.lines, 'parked_receipts_dropped');
    expect(said).toHaveLength(2);
    expect(said[0]).toMatchObject({ level: 'warn', upstream: 'up1', reason: 'cap', max: 100 });
    expect(said[1]).toMatchObject({ level: 'warn', upstream: 'up1', reason: 'cap', intervalSeconds: 60, repeated: expect.any(Number) });
  });

  it('a receipt that names no id is answered ESME_ROK, counted and logged once per interval with a count; it is never parked', async () => {
    const h = await harness({ max: 100, maxAgeMs: 3_600_000 });
    const answers = await Promise.all(Array.from({ length: 50 }, () => h.deliveries.handle('up1', 'up1#0', deliverSm('sub:001 dlvrd:001 stat:DELIVRD err:000 text:no id'))));
    expect(answers.every((status) => status === 0)).toBe(true);
    expect(h.receipts.get('no_id')).toBe(50);
    expect(await h.parked()).toBe(0);
    const first = warned(h.lines, 'receipt_without_id');
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ level: 'warn', upstream: 'up1', bind: 'up1#0', stat: 'DELIVRD', text: 'sub:001 dlvrd:001 stat:DELIVRD err:000 text:no id' });
    h.clock.advance(60_000);
    expect(warned(h.lines, 'receipt_without_id')).toHaveLength(2);
    expect(warned(h.lines, 'receipt_without_id')[1]).toMatchObject({ repeated: 49, intervalSeconds: 60 });
  });

  it('a parked receipt waits for its submit_sm_resp up to maxAgeMs, then is dropped and counted', async () => {
    const h = await harness({ max: 100, maxAgeMs: 3_600_000 });
    h.parking.start();
    expect(await h.deliveries.handle('up1', 'up1#0', receipt('AB01'))).toBe(0);
    expect(await h.deliveries.handle('up1', 'up1#0', receipt('AB02'))).toBe(0);
    expect(await h.parked()).toBe(2);
    // Half an hour: both still wait, and one finds its part.
    h.clock.advance(30 * 60_000);
    await h.store.accept({ messages: [newMessage('late', { upstream: 'up1' })], now: h.clock.wallNow() });
    await h.store.claim('up1', h.clock.wallNow(), 10);
    await h.store.recordSubmit('late', [{ part: 1, kind: 'accepted', smscId: 'AB01', matchKey: 'ab01', bind: 'up1#0', attempts: 1 }], h.clock.wallNow());
    expect((await h.store.getMessage('late'))?.status).toBe('DELIVERED');
    expect(await h.parked()).toBe(1);
    // Past the hour: the other is dropped at a prune (every PARKING_PRUNE_EVERY_MS).
    h.clock.advance(29 * 60_000);
    expect(await h.parked()).toBe(1);
    await until(async () => {
      h.clock.advance(PARKING_PRUNE_EVERY_MS);
      return await h.parked() === 0;
    }, 5_000, 'the old receipt dropped');
    expect(h.clock.wallNow() - Date.UTC(2026, 10, 23, 12)).toBeGreaterThan(3_600_000);
    expect(h.dropped.get('up1 age')).toBe(1);
    expect(warned(h.lines, 'parked_receipts_dropped')[0]).toMatchObject({ level: 'info', reason: 'age', receipts: 1 });
  });
});
