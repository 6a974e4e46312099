/**
 * An SMSC that floods a bind with deliver_sm. Sent without waiting for their answers, they must
 * not pile up store calls and memory: past `maxPendingDeliveries` being stored on a bind, the rest
 * are answered ESME_RTHROTTLED at once (SMPP v3.4 §5.1.3: the SMSC delivers them again later), and
 * what was answered ESME_RTHROTTLED was never taken, so delivering it again loses nothing. Nor may
 * a handler that fails each of them write a line each.
 */
import { afterEach, expect, it } from 'vitest';
import { SystemClock } from '../../src/core/clock.js';
import { Deliveries } from '../../src/dispatch/deliveries.js';
import type { Pool } from '../../src/smpp/pool.js';
import type { InboundRecord } from '../../src/store/inbound.js';
import { makePool, recordingMetrics } from '../support/engine.js';
import { FakeSmsc, type FakeLink } from '../support/fake-smsc.js';
import { recordingLog } from '../support/http.js';
import { deliverSmBytes } from '../support/pdu-bytes.js';
import { storeFolder } from '../support/sqlite-store.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const DELIVER_SM_RESP = 0x80000005;
const ESME_RTHROTTLED = 0x58;
const MAX_PENDING = 5;

const answers = (link: FakeLink, from: number) => link.seen.filter((p) => p.commandId === DELIVER_SM_RESP && p.sequenceNumber >= from);
const mo = (seq: number): Buffer => deliverSmBytes(seq, '447700900001', '12345', Buffer.from(`reply ${seq}`, 'latin1')).build();

it('answers ESME_RTHROTTLED at once past maxPendingDeliveries being stored, and stores all of them once the SMSC delivers again', async () => {
  const smsc = await FakeSmsc.start();
  cleanups.push(() => smsc.stop());
  const folder = storeFolder();
  cleanups.push(() => folder.cleanup());
  const store = await folder.open();
  // A slow store: each MO waits for the gate before it is written.
  let openGate!: () => void;
  const gate = new Promise<void>((resolve) => { openGate = resolve; });
  let storing = 0;
  let mostStoring = 0;
  const recordInbound = store.recordInbound.bind(store);
  store.recordInbound = async (r: InboundRecord) => {
    mostStoring = Math.max(mostStoring, ++storing);
    try {
      await gate;
      return await recordInbound(r);
    } finally {
      storing--;
    }
  };
  const clock = new SystemClock();
  const deliveries = new Deliveries({ store, clock, log: recordingLog([]), upstreams: [{ name: 'sim', defaultAlphabet: 'gsm7', receiptIdFormat: 'auto', smscTimeZone: 'UTC' }] });
  const lines: string[] = [];
  const { counts, metrics } = recordingMetrics();
  const pool: Pool = makePool({ port: smsc.port, maxPendingDeliveries: MAX_PENDING }, clock, { log: recordingLog(lines), metrics, deliver: deliveries.handle });
  pool.start();
  cleanups.push(() => pool.stop(100));
  const link = await smsc.boundLink();

  // 20 MO messages in one write, none of them answered yet.
  link.write(Buffer.concat(Array.from({ length: 20 }, (_, i) => mo(i + 1))));
  expect(await link.waitFor(() => answers(link, 1).length === 15, 5_000)).toBe(true);
  expect(answers(link, 1).map((p) => p.status)).toEqual(Array(15).fill(ESME_RTHROTTLED));
  expect(answers(link, 1).map((p) => p.sequenceNumber)).toEqual(Array.from({ length: 15 }, (_, i) => i + 6));
  expect(storing).toBe(MAX_PENDING);
  expect(counts.deliveryThrottled).toBe(15);
  // One warning for the flood, not one per PDU.
  const warned = lines.map((l) => JSON.parse(l) as { event?: string; maxPendingDeliveries?: number }).filter((l) => l.event === 'deliveries_throttled');
  expect(warned).toEqual([expect.objectContaining({ maxPendingDeliveries: MAX_PENDING })]);

  // The store catches up: the five taken are answered ESME_ROK, and the SMSC delivers the other 15 again.
  openGate();
  expect(await link.waitFor(() => answers(link, 1).length === 20, 5_000)).toBe(true);
  expect(answers(link, 1).slice(15).map((p) => [p.sequenceNumber, p.status])).toEqual([[1, 0], [2, 0], [3, 0], [4, 0], [5, 0]]);
  // As an SMSC does: what was throttled goes again (under new sequence numbers) until it is taken.
  let retry = 15;
  let next = 101;
  for (let round = 0; retry > 0 && round < 20; round++) {
    const from = next;
    link.write(Buffer.concat(Array.from({ length: retry }, () => mo(next++))));
    expect(await link.waitFor(() => answers(link, from).length === retry, 5_000)).toBe(true);
    retry = answers(link, from).filter((p) => p.status === ESME_RTHROTTLED).length;
    expect(answers(link, from).every((p) => p.status === 0 || p.status === ESME_RTHROTTLED)).toBe(true);
  }
  expect(retry).toBe(0);

  const stored = folder.inspect().prepare('SELECT text FROM inbound ORDER BY id').all() as Array<{ text: string }>;
  expect(stored).toHaveLength(20);
  expect(mostStoring).toBeLessThanOrEqual(MAX_PENDING);
});

it('answers a temporary error to each deliver_sm its handler fails, and logs that once per interval with the count', async () => {
  const smsc = await FakeSmsc.start();
  cleanups.push(() => smsc.stop());
  const lines: string[] = [];
  const clock = new SystemClock();
  const pool: Pool = makePool({ port: smsc.port }, clock, { log: recordingLog(lines), deliver: async () => { throw new Error('store gone'); } });
  pool.start();
  const link = await smsc.boundLink();
  link.write(Buffer.concat(Array.from({ length: 50 }, (_, i) => mo(i + 1))));
  expect(await link.waitFor(() => answers(link, 1).length === 50, 5_000)).toBe(true);
  expect(answers(link, 1).every((p) => p.status === 0x64)).toBe(true); // ESME_RX_T_APPN
  const failed = () => lines.map((l) => JSON.parse(l) as { level: string; event?: string; repeated?: number }).filter((l) => l.event === 'deliver_failed');
  expect(failed()).toEqual([expect.objectContaining({ level: 'error', err: 'store gone' })]);
  // At the stop, what was held back is told: the other 49 in one line.
  await pool.stop(100);
  expect(failed().map((l) => l.repeated)).toEqual([undefined, 49]);
});
