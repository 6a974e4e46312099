import { describe, expect, it } from 'vitest';
import { encodeGenericNack, encodeSubmitSmResp, readSubmitSm } from '../../../src/simulator/hot-codec.js';
import { decodePdu, encodePdu } from '../../../src/smpp/wire.js';
import { PduBytes } from '../../support/pdu-bytes.js';

/** submit_sm built by hand: every mandatory field set to something other than its default. */
function submitSm(sm: Buffer, extra: (b: PduBytes) => PduBytes = (b) => b): Buffer {
  const b = new PduBytes(0x00000004, 0x01020304).cstr('CMT').u8(5).u8(0).cstr('Acme\xe9').u8(1).u8(1).cstr('4915112345678')
    .u8(0x40).u8(0x7f).u8(1).cstr('261122123000000+').cstr('000001000000000R').u8(0x11).u8(1).u8(8).u8(3).sm(sm);
  return extra(b).build();
}

/** The same PDU with its body cut to `bodyLength` octets and command_length saying so. */
function cut(frame: Buffer, bodyLength: number): Buffer {
  const out = Buffer.from(frame.subarray(0, 16 + bodyLength));
  out.writeUInt32BE(out.length, 0);
  return out;
}

describe('the simulator\'s submit_sm reader', () => {
  it('reads a submit_sm without TLVs exactly as decodePdu does', () => {
    for (const sm of [Buffer.alloc(0), Buffer.from('Hello'), Buffer.alloc(254, 0xe9)]) {
      const frame = submitSm(sm);
      const decoded = decodePdu(frame);
      if (!decoded.ok) throw new Error(decoded.reason);
      expect(readSubmitSm(frame)).toEqual(decoded.pdu);
    }
  });

  it('leaves a body cut at any offset, and one with TLVs, to decodePdu', () => {
    const frame = submitSm(Buffer.from('Hello'));
    for (let body = 0; body < frame.length - 16; body++) {
      const short = cut(frame, body);
      expect(readSubmitSm(short), `body of ${body} octets`).toBeUndefined();
      expect(decodePdu(short).ok, `body of ${body} octets`).toBe(false);
    }
    const withTlv = submitSm(Buffer.alloc(0), (b) => b.tlv(0x0424, Buffer.from('payload')));
    expect(readSubmitSm(withTlv)).toBeUndefined();
    expect(decodePdu(withTlv).ok).toBe(true);
    const smPastEnd = submitSm(Buffer.from('Hello'));
    smPastEnd[smPastEnd.length - 6] = 6; // sm_length one more than the octets left
    expect(readSubmitSm(smPastEnd)).toBeUndefined();
    expect(decodePdu(smPastEnd).ok).toBe(false);
  });
});

describe('the simulator\'s response encoders', () => {
  it('write the same octets as the codec', () => {
    const resp = (status: number, messageId: string): Buffer => encodePdu({ command: 'submit_sm_resp', sequenceNumber: 0x7fffffff, commandStatus: status, messageId });
    expect(encodeSubmitSmResp(0x7fffffff, 0, '1a2b3c4d5e6f7a8b').toString('hex')).toBe(resp(0, '1a2b3c4d5e6f7a8b').toString('hex'));
    expect(encodeSubmitSmResp(0x7fffffff, 0x58, '').toString('hex')).toBe(resp(0x58, '').toString('hex'));
    expect(encodeGenericNack(42, 0x08).toString('hex')).toBe(encodePdu({ command: 'generic_nack', sequenceNumber: 42, commandStatus: 0x08 }).toString('hex'));
  });
});
