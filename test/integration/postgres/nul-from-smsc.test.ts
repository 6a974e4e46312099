/**
 * What an SMSC sends, with a NUL octet in it, into the PostgreSQL store: a TEXT column cannot hold
 * U+0000 (PostgreSQL refuses the whole statement), so a NUL that reached a column would make the
 * deliver_sm unstorable: answered with a temporary error and delivered again for ever, and, for a
 * part of a long MO, the sweep that stores incomplete messages failing every time it reached it.
 * Some SMSCs end short_message with the NUL of a C string; UCS-2 and Latin-1 can carry 0x00.
 */
import { expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { silentLog } from '../../../src/core/log.js';
import { Deliveries, MO_MAX_WAIT_MS } from '../../../src/dispatch/deliveries.js';
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

  it('a one-part MO with a NUL is stored flagged, its bytes kept', async () => {
    const clock = new ManualClock(0, WALL);
    expect(await deliveries(clock).handle('up1', 'up1#0', deliverSm(0, 8, Buffer.from('0048000000690021', 'hex')))).toBe(0);
    expect(await t.sql('SELECT text, problems, raw FROM inbound')).toEqual([
      { text: 'H\ufffdi!', problems: 'INVALID_BYTES', raw: Buffer.from('0048000000690021', 'hex') },
    ]);
  });

  it('a part of a long MO with a NUL is stored when its message is whole, and when it waited too long', async () => {
    const clock = new ManualClock(0, WALL);
    const d = deliveries(clock);
    // UCS-2 parts under UDH reference 0x31 (2 parts) and 0x32 (the second never comes).
    const part = (ref: number, seq: number, hex: string) => deliverSm(0x40, 8, Buffer.from(`050003${ref.toString(16)}02${String(seq).padStart(2, '0')}${hex}`, 'hex'));
    expect(await d.handle('up1', 'up1#0', part(0x31, 1, '00480000'))).toBe(0);
    expect(await d.handle('up1', 'up1#0', part(0x31, 2, '0069'))).toBe(0);
    expect(await d.handle('up1', 'up1#0', part(0x32, 1, '0000004f'))).toBe(0);
    clock.advance(MO_MAX_WAIT_MS + 1);
    await d.flushStaleInbound();
    expect(await t.sql('SELECT text, parts, missing_parts, problems FROM inbound ORDER BY id')).toEqual([
      { text: 'H\ufffdi', parts: 2, missing_parts: null, problems: 'INVALID_BYTES' },
      { text: '\ufffdO', parts: 1, missing_parts: '[2]', problems: 'INVALID_BYTES' },
    ]);
    expect(await t.sql('SELECT * FROM inbound_parts')).toEqual([]);
  });
});
