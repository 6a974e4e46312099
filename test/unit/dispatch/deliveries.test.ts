import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { silentLog } from '../../../src/core/log.js';
import { WarningThrottle } from '../../../src/core/warning-throttle.js';
import { Deliveries, MO_MAX_WAIT_MS } from '../../../src/dispatch/deliveries.js';
import { submitSmDefaults, type DeliverSmPdu } from '../../../src/smpp/pdu.js';
import type { InboundMessages, InboundRecord } from '../../../src/store/inbound.js';
import type { ReceiptMatching, ReceiptRecord } from '../../../src/store/receipts.js';
import { recordingLog } from '../../support/http.js';
import { storeFolder, type StoreFolder } from '../../support/sqlite-store.js';

const receipt = (id: string, stat = 'DELIVRD'): DeliverSmPdu => ({
  ...submitSmDefaults(), command: 'deliver_sm', sequenceNumber: 1, esmClass: 0x04, dataCoding: 0,
  sourceAddr: '4915112345678', destinationAddr: 'smppd',
  shortMessage: Buffer.from(`id:${id} sub:001 dlvrd:001 submit date:2611231200 done date:2611231201 stat:${stat} err:000 text:hi`),
});

type DeliveryStore = ReceiptMatching & InboundMessages;

/** Only the two methods these cases reach; the rest of the roles is not. */
function storeWith(applyReceipt: (r: ReceiptRecord) => Promise<unknown>, recordInbound: (r: InboundRecord) => Promise<void> = async () => {}): DeliveryStore {
  return { applyReceipt, recordInbound } as unknown as DeliveryStore;
}

const make = (store: DeliveryStore) => new Deliveries({
  store, clock: new ManualClock(), log: silentLog,
  upstreams: [{ name: 'up', defaultAlphabet: 'gsm7', receiptIdFormat: 'auto', smscTimeZone: 'UTC' }],
});

describe('Deliveries', () => {
  it('answers ESME_ROK only after the store took the receipt, with its keys and status', async () => {
    const seen: ReceiptRecord[] = [];
    const d = make(storeWith(async (r) => { seen.push(r); return { kind: 'parked' }; }));
    expect(await d.handle('up', 'up#0', receipt('0A1B'))).toBe(0);
    expect(seen[0]).toMatchObject({ upstream: 'up', status: 'DELIVERED', reason: null });
    expect(seen[0]!.keys).toContain('a1b');
  });

  it('answers a temporary error (ESME_RX_T_APPN) when the store fails, so the SMSC sends it again', async () => {
    const d = make(storeWith(async () => { throw new Error('disk full'); }));
    expect(await d.handle('up', 'up#0', receipt('1'))).toBe(0x64);
  });

  it('an unknown stat is stored raw with no status', async () => {
    const seen: ReceiptRecord[] = [];
    const d = make(storeWith(async (r) => { seen.push(r); return { kind: 'matched', messageId: 'm', part: 1, key: '1', changed: false }; }));
    expect(await d.handle('up', 'up#0', receipt('1', 'BUFFRED'))).toBe(0);
    expect(seen[0]).toMatchObject({ status: null, raw: expect.objectContaining({ stat: 'BUFFRED' }) });
  });

  it('an MO message is stored as inbound text; a failing store gives a temporary error', async () => {
    const inbound: InboundRecord[] = [];
    const mo: DeliverSmPdu = { ...receipt('x'), esmClass: 0, shortMessage: Buffer.from('Hello there') };
    expect(await make(storeWith(async () => ({ kind: 'parked' }), async (r) => { inbound.push(r); })).handle('up', 'up#0', mo)).toBe(0);
    expect(inbound[0]).toMatchObject({ upstream: 'up', source: '4915112345678', destination: 'smppd', text: 'Hello there', parts: 1 });
    expect(await make(storeWith(async () => ({ kind: 'parked' }), async () => { throw new Error('locked'); })).handle('up', 'up#0', mo)).toBe(0x64);
  });
});

describe('Deliveries: a failing store', () => {
  function failing() {
    const clock = new ManualClock();
    const lines: string[] = [];
    const counted: string[] = [];
    const fail = async (): Promise<never> => { throw new Error('disk full'); };
    const deliveries = new Deliveries({
      store: storeWith(fail, fail), clock, log: recordingLog(lines), warnings: new WarningThrottle(clock, 60_000),
      counters: { receipt: (u, r) => counted.push(`receipt ${u} ${r}`), inbound: (u, r) => counted.push(`inbound ${u} ${r}`) },
      upstreams: ['up', 'other'].map((name) => ({ name, defaultAlphabet: 'gsm7' as const, receiptIdFormat: 'auto' as const, smscTimeZone: 'UTC' })),
    });
    const logged = () => lines.map((l) => JSON.parse(l) as { level: string; event?: string; upstream?: string; repeated?: number });
    return { clock, deliveries, counted, logged };
  }

  it('logs store_error once per upstream per interval, with the count, not a line per deliver_sm', async () => {
    const { clock, deliveries, logged } = failing();
    for (let i = 0; i < 100; i++) {
      expect(await deliveries.handle('up', 'up#0', receipt(String(i)))).toBe(0x64);
      expect(await deliveries.handle('other', 'other#0', receipt(String(i)))).toBe(0x64);
    }
    expect(logged().map((l) => [l.level, l.event, l.upstream])).toEqual([['error', 'store_error', 'up'], ['error', 'store_error', 'other']]);
    clock.advance(60_000);
    expect(logged().slice(2).map((l) => [l.upstream, l.repeated])).toEqual([['up', 99], ['other', 99]]);
  });

  it('counts a receipt it could not store as a receipt error, and an MO message as an inbound error', async () => {
    const { deliveries, counted } = failing();
    await deliveries.handle('up', 'up#0', receipt('1'));
    await deliveries.handle('up', 'up#0', { ...receipt('x'), esmClass: 0, shortMessage: Buffer.from('Hello there') });
    expect(counted).toEqual(['receipt up error', 'inbound up error']);
  });
});

describe('Deliveries: MO messages on a real store', () => {
  let folder: StoreFolder | undefined;
  afterEach(async () => { await folder?.cleanup(); folder = undefined; });

  const WALL = Date.UTC(2026, 0, 1);
  const part = (seq: number, total: number, hex: string, over: Partial<DeliverSmPdu> = {}): DeliverSmPdu => ({
    ...receipt('x'), esmClass: 0x40, sourceAddr: '447700900001', destinationAddr: '12345',
    shortMessage: Buffer.from(`050003a7${total.toString(16).padStart(2, '0')}${seq.toString(16).padStart(2, '0')}${hex}`, 'hex'), ...over,
  });

  async function setUp() {
    folder = storeFolder();
    const store = await folder.open();
    const clock = new ManualClock(0, WALL);
    const inbound: string[] = [];
    const deliveries = new Deliveries({
      store, clock, log: silentLog, counters: { receipt: () => {}, inbound: (u) => inbound.push(u) },
      upstreams: [{ name: 'up', defaultAlphabet: 'gsm7', receiptIdFormat: 'auto', smscTimeZone: 'UTC' }],
      routeInbound: () => ({ client: 'acme', events: true }),
    });
    const db = folder.inspect();
    const rows = <R>(sql: string) => db.prepare(sql).all() as R[];
    return { store, clock, deliveries, inbound, rows };
  }

  it('answers each part of a long MO after committing it; the last one stores the whole message', async () => {
    const { deliveries, inbound, rows } = await setUp();
    expect(await deliveries.handle('up', 'up#0', part(2, 2, '6263'))).toBe(0);
    expect(rows('SELECT seq, received_at FROM inbound_parts')).toEqual([{ seq: 2, received_at: WALL }]);
    expect(inbound).toEqual([]);
    expect(await deliveries.handle('up', 'up#1', part(1, 2, '61'))).toBe(0);
    expect(rows('SELECT text, parts, client FROM inbound')).toEqual([{ text: 'abc', parts: 2, client: 'acme' }]);
    expect(rows('SELECT * FROM inbound_parts')).toEqual([]);
    expect(inbound).toEqual(['up']);
    // Delivered again (its deliver_sm_resp was lost): answered, nothing new stored.
    expect(await deliveries.handle('up', 'up#0', part(1, 2, '61'))).toBe(0);
    expect(rows('SELECT count(*) AS n FROM inbound')).toEqual([{ n: 1 }]);
    expect(rows('SELECT count(*) AS n FROM inbound_parts')).toEqual([{ n: 0 }]);
  });

  it('stores an incomplete MO once it has waited more than MO_MAX_WAIT_MS of wall time from its first part, counting it', async () => {
    const { deliveries, clock, inbound, rows } = await setUp();
    await deliveries.handle('up', 'up#0', part(1, 3, '61'));
    clock.advance(MO_MAX_WAIT_MS);
    await deliveries.flushStaleInbound();
    expect(rows('SELECT count(*) AS n FROM inbound')).toEqual([{ n: 0 }]);
    clock.advance(1);
    await deliveries.flushStaleInbound();
    expect(rows('SELECT text, parts, missing_parts FROM inbound')).toEqual([{ text: 'a', parts: 1, missing_parts: '[2,3]' }]);
    expect(inbound).toEqual(['up']);
  });

  it('an MO that cannot be decoded is stored flagged with its raw bytes', async () => {
    const { deliveries, rows } = await setUp();
    const odd: DeliverSmPdu = { ...receipt('x'), esmClass: 0, dataCoding: 8, shortMessage: Buffer.from('004100', 'hex') };
    expect(await deliveries.handle('up', 'up#0', odd)).toBe(0);
    const [row] = rows<{ text: string; problems: string; raw: Buffer }>('SELECT text, problems, raw FROM inbound');
    expect(row).toEqual({ text: 'A\ufffd', problems: 'UCS2_ODD_LENGTH', raw: Buffer.from('004100', 'hex') });
  });

  it('a part the store cannot take is answered with a temporary error', async () => {
    const { deliveries, store } = await setUp();
    await store.close();
    expect(await deliveries.handle('up', 'up#0', part(1, 2, '61'))).toBe(0x64);
  });
});
