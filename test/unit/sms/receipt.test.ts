import { describe, expect, it } from 'vitest';
import type { DataSmPdu, DeliverSmPdu } from '../../../src/smpp/pdu.js';
import { isReceipt, MESSAGE_STATE_STAT, parseReceipt, type ReceiptSource } from '../../../src/sms/receipt.js';
import { parseTimeZone } from '../../../src/core/time-zone.js';
import { statusFromReceipt } from '../../../src/sms/status.js';

const UTC = { timeZone: 'UTC' };
const receipt = (text: string, tlvs?: ReceiptSource['tlvs'], esmClass = 0x04): ReceiptSource => ({
  esmClass,
  shortMessage: Buffer.from(text, 'latin1'),
  ...(tlvs === undefined ? {} : { tlvs }),
});

describe('isReceipt (SMPP v3.4 §5.2.12 message type bits 2–5)', () => {
  it('counts SMSC delivery receipts, SME acknowledgements and intermediate notifications', () => {
    expect(isReceipt(0x04)).toBe(true);
    expect(isReceipt(0x08)).toBe(true);
    expect(isReceipt(0x20)).toBe(true);
  });

  it('ignores the messaging mode and GSM feature bits', () => {
    expect(isReceipt(0x04 | 0x40 | 0x03)).toBe(true);
    expect(isReceipt(0x20 | 0x80)).toBe(true);
  });

  it('does not count a normal message, a user acknowledgement or a conversation abort', () => {
    for (const esm of [0x00, 0x40, 0x03, 0x10, 0x18, 0x0c, 0x3c]) expect(isReceipt(esm), `0x${esm.toString(16)}`).toBe(false);
  });
});

describe('parseReceipt', () => {
  it('reads a standard receipt with no warnings', () => {
    const r = parseReceipt(receipt('id:0123456789 sub:001 dlvrd:001 submit date:2611221230 done date:2611221231 stat:DELIVRD err:000 text:Hello world'), UTC);
    expect(r).toEqual({
      id: '0123456789', stat: 'DELIVRD', err: '000', sub: '001', dlvrd: '001',
      submitDate: '2026-11-22T12:30:00Z', doneDate: '2026-11-22T12:31:00Z', text: 'Hello world',
      raw: 'id:0123456789 sub:001 dlvrd:001 submit date:2611221230 done date:2611221231 stat:DELIVRD err:000 text:Hello world',
      warnings: [],
    });
  });

  it('reads keys in any case and submit_date / donedate spellings; upper-cases the stat word', () => {
    const r = parseReceipt(receipt('ID:ab12 SUB:001 DLVRD:001 Submit_Date:2611221230 DONEDATE:2611221231 Stat:delivrd ERR:0 TEXT:x'), UTC);
    expect(r).toMatchObject({ id: 'ab12', stat: 'DELIVRD', err: '0', submitDate: '2026-11-22T12:30:00Z', doneDate: '2026-11-22T12:31:00Z', text: 'x' });
  });

  it('takes the message_state TLV when the text is empty', () => {
    for (const [state, word] of Object.entries(MESSAGE_STATE_STAT)) {
      const r = parseReceipt({ esmClass: 0x04, shortMessage: Buffer.alloc(0), tlvs: { receiptedMessageId: 'F00', messageState: Number(state) } }, UTC);
      expect(r).toMatchObject({ id: 'F00', stat: word, err: null, doneDate: null, text: null, warnings: [] });
    }
  });

  it('reads network_error_code: type byte, then a 2-byte code (SMPP v3.4 §5.3.2.31)', () => {
    const r = parseReceipt(receipt('id:1 stat:UNDELIV err:034', { networkErrorCode: Buffer.from([0x03, 0x00, 0x22]) }), UTC);
    expect(r.networkError).toEqual({ type: 3, code: 34 });
    expect(r.warnings).toEqual([]);
  });

  it('warns about a network_error_code of the wrong length and reads no error from a short one', () => {
    const short = parseReceipt(receipt('id:1 stat:UNDELIV', { networkErrorCode: Buffer.from([0x03]) }), UTC);
    expect(short.networkError).toBeUndefined();
    expect(short.warnings.join()).toMatch(/network_error_code is 1 bytes/);
    const long = parseReceipt(receipt('id:1 stat:UNDELIV', { networkErrorCode: Buffer.from([0x03, 0x01, 0x00, 0x00]) }), UTC);
    expect(long.networkError).toEqual({ type: 3, code: 256 });
    expect(long.warnings).toHaveLength(1);
  });

  it('uses the TLVs when they contradict the text, and says so', () => {
    const r = parseReceipt(receipt('id:123 stat:UNDELIV err:001 text:', { receiptedMessageId: '999', messageState: 2 }), UTC);
    expect(r.id).toBe('999');
    expect(r.stat).toBe('DELIVRD');
    expect(r.warnings).toEqual([
      'id mismatch: receipted_message_id "999", text id "123"; the TLV is used',
      'stat mismatch: message_state DELIVRD, text stat UNDELIV; the TLV is used',
    ]);
  });

  it('names a hex/decimal mismatch as such', () => {
    const r = parseReceipt(receipt('id:1710 stat:DELIVRD', { receiptedMessageId: '6AE', messageState: 2 }), UTC);
    expect(r.id).toBe('6AE');
    expect(r.warnings).toEqual(['id mismatch: receipted_message_id "6AE", text id "1710" (the same number in hex and in decimal); the TLV is used']);
  });

  it('does not call a difference of case or leading zeros, or a full §5.2.28 state name, a mismatch', () => {
    const r = parseReceipt(receipt('id:000abc stat:DELIVERED', { receiptedMessageId: 'ABC', messageState: 2 }), UTC);
    expect(r).toMatchObject({ id: 'ABC', stat: 'DELIVRD', warnings: [] });
  });

  it('converts 12-digit dates from an SMSC in +04:00 to UTC', () => {
    const r = parseReceipt(receipt('id:7 submit date:261122123005 done date:261123000107 stat:DELIVRD err:000'), { timeZone: '+04:00' });
    expect(r.submitDate).toBe('2026-11-22T08:30:05Z');
    expect(r.doneDate).toBe('2026-11-22T20:01:07Z');
  });

  it('converts dates in an IANA zone, given by name or resolved once', () => {
    const text = 'id:7 done date:2607011200 stat:DELIVRD';
    expect(parseReceipt(receipt(text), { timeZone: 'Europe/Berlin' }).doneDate).toBe('2026-07-01T10:00:00Z');
    const zone = parseTimeZone('America/New_York');
    expect(zone).not.toBeNull();
    expect(parseReceipt(receipt(text), { timeZone: zone! }).doneDate).toBe('2026-07-01T16:00:00Z');
  });

  it('keeps an unparseable date null with a warning, and an unknown zone leaves every date null', () => {
    const bad = parseReceipt(receipt('id:1 submit date:2613011200 done date:yesterday stat:DELIVRD'), UTC);
    expect(bad).toMatchObject({ submitDate: null, doneDate: null });
    expect(bad.warnings).toHaveLength(2);
    const zone = parseReceipt(receipt('id:1 done date:2611221231 stat:DELIVRD'), { timeZone: 'Mars/Olympus' });
    expect(zone.doneDate).toBeNull();
    expect(zone.warnings).toEqual(['unknown time zone "Mars/Olympus": dates not converted']);
  });

  it('keeps unknown stat words raw; the status model ignores them', () => {
    for (const word of ['BUFFRED', 'ACKED', 'WHATEVER']) {
      const r = parseReceipt(receipt(`id:1 stat:${word} err:000`), UTC);
      expect(r.stat).toBe(word);
      expect(statusFromReceipt(r.stat, r.err)).toEqual({ status: null });
    }
  });

  it('ignores unknown vendor fields and keeps err of any width as written', () => {
    const r = parseReceipt(receipt('id:5 imsi:123456 stat:UNDELIV err:00001 mccmnc:42402 text:hi there'), UTC);
    expect(r).toMatchObject({ id: '5', stat: 'UNDELIV', err: '00001', text: 'hi there', warnings: [] });
  });

  it('keeps the first of a repeated field and warns', () => {
    const r = parseReceipt(receipt('id:5 stat:DELIVRD stat:UNDELIV'), UTC);
    expect(r.stat).toBe('DELIVRD');
    expect(r.warnings).toEqual(['repeated field stat:UNDELIV ignored; the first one is used']);
  });

  it('reads message_payload when short_message is empty (data_sm receipts, SMPP v3.4 §5.3.2.32)', () => {
    const pdu: DataSmPdu = {
      command: 'data_sm', sequenceNumber: 1, commandStatus: 0, serviceType: '', sourceAddrTon: 0, sourceAddrNpi: 0,
      sourceAddr: '', destAddrTon: 0, destAddrNpi: 0, destinationAddr: '', esmClass: 0x04, registeredDelivery: 0, dataCoding: 0,
      tlvs: { messagePayload: Buffer.from('id:44 stat:EXPIRED err:001', 'latin1') },
    };
    expect(parseReceipt(pdu, UTC)).toMatchObject({ id: '44', stat: 'EXPIRED', err: '001', raw: 'id:44 stat:EXPIRED err:001' });
  });

  it('takes a deliver_sm PDU as it is, skipping a user data header when UDHI is set', () => {
    const text = Buffer.from('id:9 stat:DELIVRD', 'latin1');
    const pdu: DeliverSmPdu = {
      command: 'deliver_sm', sequenceNumber: 1, commandStatus: 0, serviceType: '', sourceAddrTon: 0, sourceAddrNpi: 0,
      sourceAddr: '', destAddrTon: 0, destAddrNpi: 0, destinationAddr: '', esmClass: 0x44, protocolId: 0, priorityFlag: 0,
      scheduleDeliveryTime: '', validityPeriod: '', registeredDelivery: 0, replaceIfPresentFlag: 0, dataCoding: 0, smDefaultMsgId: 0,
      shortMessage: Buffer.concat([Buffer.from([0x05, 0x00, 0x03, 0x01, 0x02, 0x01]), text]),
    };
    expect(parseReceipt(pdu, UTC)).toMatchObject({ id: '9', stat: 'DELIVRD', warnings: [] });
  });

  it('warns about an esm_class that is not a receipt, a missing id and a missing state', () => {
    const r = parseReceipt(receipt('hello there', undefined, 0x00), UTC);
    expect(r).toMatchObject({ id: null, stat: null, text: null, raw: 'hello there' });
    expect(r.warnings).toEqual([
      'esm_class 0x00 is not a receipt type (SMPP v3.4 §5.2.12)',
      'no message id: neither receipted_message_id nor id: in the text',
      'no state: neither message_state nor stat: in the text',
    ]);
  });

  it('ignores a message_state outside 1–8 with a warning and falls back to the text', () => {
    const r = parseReceipt(receipt('id:1 stat:ENROUTE', { messageState: 9 }), UTC);
    expect(r.stat).toBe('ENROUTE');
    expect(r.warnings).toEqual(['message_state 9 is not an SMPP v3.4 value (§5.2.28); ignored']);
  });

  it('reads a value written after a space following the colon', () => {
    const r = parseReceipt(receipt('id: 77 stat : DELIVRD err:'), UTC);
    expect(r).toMatchObject({ id: '77', stat: 'DELIVRD', err: null });
  });

  it('ends a value at a NUL, as at white space (short_message sent as a C string); the raw text keeps it', () => {
    const r = parseReceipt(receipt('id:AB12 stat:UNDELIV err:001\u0000'), UTC);
    expect(r).toMatchObject({ id: 'AB12', stat: 'UNDELIV', err: '001', raw: 'id:AB12 stat:UNDELIV err:001\u0000' });
    expect(parseReceipt(receipt('id:AB\u000012 stat:DEL\u0000IVRD err:0\u000001 text:x\u0000y'), UTC))
      .toMatchObject({ id: 'AB', stat: 'DEL', err: '0', text: 'x\u0000y' });
  });
});
