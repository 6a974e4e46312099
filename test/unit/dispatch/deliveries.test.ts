import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { silentLog } from '../../../src/core/log.js';
import { Deliveries } from '../../../src/dispatch/deliveries.js';
import { submitSmDefaults, type DeliverSmPdu } from '../../../src/smpp/pdu.js';
import type { InboundRecord, ReceiptRecord, Store } from '../../../src/store/store.js';

const receipt = (id: string, stat = 'DELIVRD'): DeliverSmPdu => ({
  ...submitSmDefaults(), command: 'deliver_sm', sequenceNumber: 1, esmClass: 0x04, dataCoding: 0,
  sourceAddr: '4915112345678', destinationAddr: 'smppd',
  shortMessage: Buffer.from(`id:${id} sub:001 dlvrd:001 submit date:2611231200 done date:2611231201 stat:${stat} err:000 text:hi`),
});

/** Only the two methods deliveries use; the rest of the store is not reached. */
function storeWith(applyReceipt: (r: ReceiptRecord) => Promise<unknown>, recordInbound: (r: InboundRecord) => Promise<void> = async () => {}): Store {
  return { applyReceipt, recordInbound } as unknown as Store;
}

const make = (store: Store) => new Deliveries({
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
