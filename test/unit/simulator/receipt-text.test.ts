import { describe, expect, it } from 'vitest';
import { RECEIPT_STATS, formatReceiptText, receiptDate, receiptExcerpt, receiptWanted } from '../../../src/simulator/receipt-text.js';
import { encodeReceipt, type ReceiptJob } from '../../../src/simulator/receipts.js';
import { BindCounters } from '../../../src/simulator/counters.js';
import { MessageIdSource, receiptId } from '../../../src/simulator/message-id.js';
import { decodePdu, encodePdu } from '../../../src/smpp/wire.js';

const submit = Date.UTC(2026, 2, 7, 9, 5, 59);
const done = Date.UTC(2026, 11, 31, 23, 59, 1);

describe('receipt text', () => {
  it('writes dates as YYMMDDhhmm in UTC', () => {
    expect(receiptDate(submit)).toBe('2603070905');
    expect(receiptDate(done)).toBe('2612312359');
  });

  it('formats a delivered receipt in the Appendix B layout', () => {
    expect(formatReceiptText({ id: 'a1b2', stat: 'DELIVRD', submitDate: submit, doneDate: done, text: 'Hello world, this is longer than twenty' }))
      .toBe('id:a1b2 sub:001 dlvrd:001 submit date:2603070905 done date:2612312359 stat:DELIVRD err:000 text:Hello world, this is');
  });

  it('writes dlvrd 000 and a non-zero err for failures', () => {
    const text = formatReceiptText({ id: '7', stat: 'UNDELIV', submitDate: submit, doneDate: done, text: 'x' });
    expect(text).toContain('dlvrd:000');
    expect(text).toMatch(/stat:UNDELIV err:(?!000)\d{3} text:x$/);
  });

  it('takes the first 20 octets as Latin-1, after a user data header', () => {
    expect(receiptExcerpt(Buffer.from('caf\xe9 and more text than twenty', 'latin1'), 0)).toBe('caf\xe9 and more text t');
    const udh = Buffer.from([0x05, 0x00, 0x03, 0x2a, 0x02, 0x01]);
    expect(receiptExcerpt(Buffer.concat([udh, Buffer.from('part one')]), 0x40)).toBe('part one');
  });

  it('honours registered_delivery: 1 always, 2 on failure only, 0 and 3 never', () => {
    expect(receiptWanted(1, 'DELIVRD')).toBe(true);
    expect(receiptWanted(0x11, 'UNDELIV')).toBe(true);
    expect(receiptWanted(2, 'DELIVRD')).toBe(false);
    expect(receiptWanted(2, 'EXPIRED')).toBe(true);
    expect(receiptWanted(0, 'DELIVRD')).toBe(false);
    expect(receiptWanted(3, 'UNDELIV')).toBe(false);
  });
});

describe('receipt deliver_sm', () => {
  const job: ReceiptJob = {
    systemId: 'acct', origin: new BindCounters(1, 'acct', 'transceiver', '', 0),
    id: '12ab', stat: 'EXPIRED', excerpt: 'hi', submitDate: submit,
    sourceAddrTon: 1, sourceAddrNpi: 1, sourceAddr: '4915112345678', destAddrTon: 5, destAddrNpi: 0, destinationAddr: 'Acme',
    redelivered: false,
  };

  it('carries esm_class 0x04, data_coding 0, receipted_message_id and message_state, and survives the codec', () => {
    const bytes = encodeReceipt(job, done);
    bytes.writeUInt32BE(9, 12);
    const decoded = decodePdu(bytes);
    expect(decoded.ok).toBe(true);
    if (!decoded.ok || decoded.pdu.command !== 'deliver_sm') throw new Error('not a deliver_sm');
    expect(decoded.pdu.esmClass).toBe(0x04);
    expect(decoded.pdu.dataCoding).toBe(0);
    expect(decoded.pdu.sourceAddr).toBe('4915112345678');
    expect(decoded.pdu.destinationAddr).toBe('Acme');
    expect(decoded.pdu.tlvs?.receiptedMessageId).toBe('12ab');
    expect(decoded.pdu.tlvs?.messageState).toBe(3);
    expect(decoded.pdu.shortMessage.toString('latin1')).toMatch(/^id:12ab sub:001 dlvrd:000 submit date:2603070905 done date:2612312359 stat:EXPIRED err:\d{3} text:hi$/);
  });

  it('writes the same octets as the codec would for the same deliver_sm', () => {
    for (const j of [job, { ...job, id: '123456789012345678', stat: 'DELIVRD' as const, excerpt: 'caf\xe9 \x00 twenty chars', sourceAddr: '', destinationAddr: 'Sender\xff' }]) {
      const text = formatReceiptText({ id: j.id, stat: j.stat, submitDate: j.submitDate, doneDate: done, text: j.excerpt });
      const expected = encodePdu({
        command: 'deliver_sm', sequenceNumber: 0, commandStatus: 0, serviceType: '',
        sourceAddrTon: j.sourceAddrTon, sourceAddrNpi: j.sourceAddrNpi, sourceAddr: j.sourceAddr,
        destAddrTon: j.destAddrTon, destAddrNpi: j.destAddrNpi, destinationAddr: j.destinationAddr,
        esmClass: 0x04, protocolId: 0, priorityFlag: 0, scheduleDeliveryTime: '', validityPeriod: '',
        registeredDelivery: 0, replaceIfPresentFlag: 0, dataCoding: 0, smDefaultMsgId: 0,
        shortMessage: Buffer.from(text, 'latin1'), tlvs: { receiptedMessageId: j.id, messageState: RECEIPT_STATS[j.stat] },
      });
      expect(encodeReceipt(j, done).toString('hex')).toBe(expected.toString('hex'));
    }
  });
});

describe('message ids', () => {
  it('never repeats, in either format, and converts between bases for receipts', () => {
    let r = 0.25;
    const ids = new MessageIdSource(() => r);
    const seen = new Set<string>();
    for (let i = 0; i < 1000; i++) seen.add(ids.next(i % 2 ? 'hex' : 'decimal'));
    r = 0.75;
    ids.newPrefix(() => r);
    for (let i = 0; i < 1000; i++) seen.add(ids.next('hex'));
    expect(seen.size).toBe(2000);
    const hex = ids.next('hex');
    expect(hex).toMatch(/^[1-9a-f][0-9a-f]{15}$/);
    const dec = ids.next('decimal');
    expect(dec).toMatch(/^[1-9]\d{14}$/);
    expect(receiptId(hex, 'hex', 'same')).toBe(hex);
    expect(receiptId(hex, 'hex', 'hex')).toBe(hex);
    expect(BigInt(receiptId(hex, 'hex', 'decimal'))).toBe(BigInt(`0x${hex}`));
    expect(BigInt(`0x${receiptId(dec, 'decimal', 'hex')}`)).toBe(BigInt(dec));
  });
});
