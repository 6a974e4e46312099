/**
 * What an SMSC sends, with a NUL octet in it, into the PostgreSQL store: a TEXT column cannot hold
 * U+0000 (PostgreSQL refuses the whole statement), so a NUL that reached a column would make the
 * deliver_sm unstorable: answered with a temporary error and delivered again for ever. Some SMSCs
 * end short_message with the NUL of a C string.
 */
import { expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { silentLog } from '../../../src/core/log.js';
import { Deliveries } from '../../../src/dispatch/deliveries.js';
import { submitSmDefaults, type DeliverSmPdu } from '../../../src/smpp/pdu.js';
import { newMessage } from '../../support/sqlite-store.js';
import { describePg, pgStorePerTest } from './pg-store.js';

const WALL = Date.UTC(2026, 10, 23, 12);
const deliverSm = (esmClass: number, dataCoding: number, shortMessage: Buffer): DeliverSmPdu => ({
  ...submitSmDefaults(), command: 'deliver_sm', sequenceNumber: 1, esmClass, dataCoding,
  sourceAddr: '447700900123', destinationAddr: '12345', shortMessage,
});

describePg('a NUL octet from the SMSC, into PostgreSQL', () => {
  const t = pgStorePerTest();
  const deliveries = (clock: ManualClock) => new Deliveries({
    store: t.store, clock, log: silentLog,
    upstreams: [{ name: 'up1', defaultAlphabet: 'gsm7', receiptIdFormat: 'same', smscTimeZone: 'UTC' }],
  });

  it('a receipt whose short_message ends in the NUL of a C string is applied, and its part FAILED with the error code', async () => {
    const clock = new ManualClock(0, WALL);
    await t.store.accept({ messages: [newMessage('m1')], now: WALL });
    await t.store.claim('up1', WALL, 10);
    await t.store.recordSubmit('m1', [{ part: 1, kind: 'accepted', smscId: 'AB12', matchKey: 'ab12', bind: 'up1#0', attempts: 1 }], WALL);
    const text = 'id:AB12 sub:001 dlvrd:000 submit date:2611231200 done date:2611231201 stat:UNDELIV err:001\u0000';
    expect(await deliveries(clock).handle('up1', 'up1#0', deliverSm(0x04, 0, Buffer.from(text, 'latin1')))).toBe(0);
    expect(await t.store.getMessage('m1')).toMatchObject({ status: 'FAILED', reason: 'stat:UNDELIV err:001' });
  });
});
