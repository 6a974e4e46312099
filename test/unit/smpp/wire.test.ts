import { describe, expect, it } from 'vitest';
import { decodePdu, encodePdu } from '../../../src/smpp/wire.js';
import { submitSmDefaults, type Pdu, type SubmitSmPdu } from '../../../src/smpp/pdu.js';
import { PduBytes, submitSmBytes } from '../../support/pdu-bytes.js';

function roundTrip(pdu: Pdu, bytes: Buffer): void {
  expect(encodePdu(pdu).toString('hex')).toBe(bytes.toString('hex'));
  const decoded = decodePdu(bytes);
  expect(decoded.ok).toBe(true);
  if (decoded.ok) expect(decoded.pdu).toMatchObject(pdu as unknown as Record<string, unknown>);
}

describe('wire codec: golden bytes both ways', () => {
  it('bind_transceiver carries interface_version 0x34, never the codec default 0x50', () => {
    const bytes = new PduBytes(0x00000009, 1).cstr('smppclient1').cstr('password').cstr('').u8(0x34).u8(0).u8(0).cstr('').build();
    roundTrip({
      command: 'bind_transceiver', sequenceNumber: 1, commandStatus: 0, systemId: 'smppclient1', password: 'password',
      systemType: '', interfaceVersion: 0x34, addrTon: 0, addrNpi: 0, addressRange: '',
    }, bytes);
  });

  it('bind_transceiver_resp, ok and refused (header only)', () => {
    roundTrip({ command: 'bind_transceiver_resp', sequenceNumber: 1, commandStatus: 0, systemId: 'SMSC' },
      new PduBytes(0x80000009, 1).cstr('SMSC').build());
    expect(encodePdu({ command: 'bind_transceiver_resp', sequenceNumber: 1, commandStatus: 0x0e, systemId: 'SMSC' }).toString('hex'))
      .toBe(new PduBytes(0x80000009, 1, 0x0e).build().toString('hex'));
  });

  it('submit_sm keeps short_message bytes and data_coding exactly as given', () => {
    const text = Buffer.from([0x00, 0x41, 0xd8, 0x3d, 0xde, 0x00]); // UCS-2 with a surrogate pair
    const pdu: SubmitSmPdu = {
      ...submitSmDefaults(), sequenceNumber: 7, sourceAddr: 'Acme', destinationAddr: '4915112345678',
      dataCoding: 8, registeredDelivery: 1, shortMessage: text,
    };
    roundTrip(pdu, submitSmBytes(7, '4915112345678', text, { source: 'Acme', dataCoding: 8, registeredDelivery: 1 }).build());
  });

  it('submit_sm with data_coding 0 is not re-encoded by the codec', () => {
    const gsm = Buffer.from([0x00, 0x1b, 0x65, 0x11]); // '@', escape+'e' (euro), '_'
    const pdu: SubmitSmPdu = { ...submitSmDefaults(), sequenceNumber: 1, destinationAddr: '1', dataCoding: 0, shortMessage: gsm };
    roundTrip(pdu, submitSmBytes(1, '1', gsm).build());
  });

  it('submit_sm_resp with a message id, and header-only when refused', () => {
    roundTrip({ command: 'submit_sm_resp', sequenceNumber: 9, commandStatus: 0, messageId: '1a2b3c' },
      new PduBytes(0x80000004, 9).cstr('1a2b3c').build());
    const refused = decodePdu(new PduBytes(0x80000004, 9, 0x58).build());
    expect(refused).toMatchObject({ ok: true, pdu: { command: 'submit_sm_resp', commandStatus: 0x58, messageId: '' } });
  });

  it('deliver_sm receipt: named TLVs decoded, vendor TLVs kept and re-encoded', () => {
    const text = Buffer.from('id:0A1B sub:001 dlvrd:001 submit date:2601011200 done date:2601011201 stat:DELIVRD err:000 text:hi');
    const bytes = new PduBytes(0x00000005, 3)
      .cstr('').u8(1).u8(1).cstr('4915112345678').u8(0).u8(0).cstr('Acme')
      .u8(0x04).u8(0).u8(0).cstr('').cstr('').u8(0).u8(0).u8(0).u8(0).sm(text)
      .tlv(0x001e, Buffer.from('0A1B\0')).tlv(0x0427, Buffer.from([2])).tlv(0x1401, Buffer.from([0xca, 0xfe]))
      .build();
    const decoded = decodePdu(bytes);
    expect(decoded.ok).toBe(true);
    if (!decoded.ok || decoded.pdu.command !== 'deliver_sm') throw new Error('not a deliver_sm');
    expect(decoded.pdu.shortMessage.equals(text)).toBe(true);
    expect(decoded.pdu.tlvs).toEqual({ receiptedMessageId: '0A1B', messageState: 2, other: [{ tag: 0x1401, value: Buffer.from([0xca, 0xfe]) }] });
    expect(encodePdu(decoded.pdu).toString('hex')).toBe(bytes.toString('hex'));
  });

  it('enquire_link, unbind and generic_nack are header only', () => {
    roundTrip({ command: 'enquire_link', sequenceNumber: 5, commandStatus: 0 }, new PduBytes(0x00000015, 5).build());
    roundTrip({ command: 'unbind_resp', sequenceNumber: 6, commandStatus: 0 }, new PduBytes(0x80000006, 6).build());
    roundTrip({ command: 'generic_nack', sequenceNumber: 6, commandStatus: 3 }, new PduBytes(0x80000000, 6, 3).build());
  });

  it('an unknown command id decodes as other, so the session can nack it', () => {
    expect(decodePdu(new PduBytes(0x00000777, 4).build())).toEqual({
      ok: true, pdu: { command: 'other', commandId: 0x777, commandStatus: 0, sequenceNumber: 4, name: 'unknown' },
    });
  });

  it('a short_message cut off by command_length is a bad body with its sequence number, not an exception', () => {
    const whole = submitSmBytes(8, '1', Buffer.from('hello world')).build();
    const cut = Buffer.from(whole.subarray(0, whole.length - 4));
    cut.writeUInt32BE(cut.length, 0);
    expect(decodePdu(cut)).toMatchObject({ ok: false, commandId: 0x00000004, sequenceNumber: 8 });
  });

  it('a truncated TLV inside a frame is a bad body, not an exception', () => {
    const bytes = new PduBytes(0x00000005, 9)
      .cstr('').u8(1).u8(1).cstr('1').u8(0).u8(0).cstr('2')
      .u8(0x04).u8(0).u8(0).cstr('').cstr('').u8(0).u8(0).u8(0).u8(0).sm(Buffer.alloc(0))
      .u16(0x0427).u16(4).u8(2) // declares 4 octets, holds 1
      .build();
    expect(decodePdu(bytes)).toMatchObject({ ok: false, commandId: 0x00000005, sequenceNumber: 9 });
  });
});

describe('wire codec: truncated requests', () => {
  it('a request cut short is a bad body answered with ESME_RINVCMDLEN; a header-only error response is fine', () => {
    expect(decodePdu(new PduBytes(0x00000004, 3).build())).toMatchObject({ ok: false, sequenceNumber: 3, nackStatus: 0x02 });
    expect(decodePdu(new PduBytes(0x00000009, 4).cstr('sys').build())).toMatchObject({ ok: false, sequenceNumber: 4, nackStatus: 0x02 });
    expect(decodePdu(new PduBytes(0x80000009, 5, 0x0e).build())).toMatchObject({ ok: true, pdu: { command: 'bind_transceiver_resp', commandStatus: 0x0e, systemId: '' } });
  });
});

describe('wire codec: each TLV is read within its own length (found by the Net::SMPP interop test)', () => {
  /** A deliver_sm (0x00000005) receipt body with these TLV bytes after the mandatory fields. */
  const deliverWith = (...tlvs: Array<[number, Buffer]>): Buffer => {
    const b = new PduBytes(0x00000005, 7)
      .cstr('').u8(1).u8(1).cstr('4915112345678').u8(0).u8(0).cstr('smppd')
      .u8(0x04).u8(0).u8(0).cstr('').cstr('').u8(0).u8(0).u8(0).u8(0)
      .sm(Buffer.from('id:abc stat:DELIVRD'));
    for (const [tag, value] of tlvs) b.tlv(tag, value);
    return b.build();
  };
  const tlvsOf = (frame: Buffer) => {
    const d = decodePdu(frame);
    if (!d.ok) throw new Error(d.reason);
    return (d.pdu as Extract<Pdu, { command: 'deliver_sm' }>).tlvs!;
  };

  it('a receipted_message_id without its NUL stops at its length, not in the next TLV', () => {
    const tlvs = tlvsOf(deliverWith([0x001e, Buffer.from('abc')], [0x0427, Buffer.from([2])]));
    expect(tlvs.receiptedMessageId).toBe('abc');
    expect(tlvs.messageState).toBe(2);
  });

  it('a number TLV of the wrong width is kept raw, not misread', () => {
    const tlvs = tlvsOf(deliverWith([0x0427, Buffer.from([0, 2])], [0x020c, Buffer.from([0xab])], [0x020e, Buffer.from([3])]));
    expect(tlvs.messageState).toBeUndefined();
    expect(tlvs.sarMsgRefNum).toBeUndefined();
    expect(tlvs.sarTotalSegments).toBe(3);
    expect(tlvs.other).toEqual([{ tag: 0x0427, value: Buffer.from([0, 2]) }, { tag: 0x020c, value: Buffer.from([0xab]) }]);
  });

  it('mandatory C-strings keep octets above 0x7F (Latin-1 both ways)', () => {
    const pdu: SubmitSmPdu = { ...submitSmDefaults(), sequenceNumber: 3, sourceAddr: 'Müller', destinationAddr: '4915112345678', dataCoding: 0, shortMessage: Buffer.from('x') };
    const d = decodePdu(encodePdu(pdu));
    expect(d.ok && (d.pdu as SubmitSmPdu).sourceAddr).toBe('Müller');
  });
});
