/**
 * Every C-Octet String of every PDU smppd encodes, walked from the codec's own tables: a NUL, a
 * character no octet carries and one character too many each fail with PDU_FIELD_INVALID before
 * anything is written; the longest value the field holds passes and reads back unchanged.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSmppdError } from '../../../src/core/errors.js';
import { submitSmDefaults, type Pdu } from '../../../src/smpp/pdu.js';
import { cOctetFields, cOctetTlvs, decodePdu, encodePdu } from '../../../src/smpp/wire.js';

const shortMessage = { shortMessage: Buffer.from('hi'), dataCoding: 0 };

/** One valid PDU of each command that has C-Octet Strings. */
const BASE: Record<string, Pdu> = {
  bind_transmitter: { command: 'bind_transmitter', sequenceNumber: 1, commandStatus: 0, systemId: 'sys', password: 'pw', systemType: '', interfaceVersion: 0x34, addrTon: 0, addrNpi: 0, addressRange: '' },
  bind_receiver: { command: 'bind_receiver', sequenceNumber: 1, commandStatus: 0, systemId: 'sys', password: 'pw', systemType: '', interfaceVersion: 0x34, addrTon: 0, addrNpi: 0, addressRange: '' },
  bind_transceiver: { command: 'bind_transceiver', sequenceNumber: 1, commandStatus: 0, systemId: 'sys', password: 'pw', systemType: '', interfaceVersion: 0x34, addrTon: 0, addrNpi: 0, addressRange: '' },
  bind_transmitter_resp: { command: 'bind_transmitter_resp', sequenceNumber: 1, commandStatus: 0, systemId: 'SMSC' },
  bind_receiver_resp: { command: 'bind_receiver_resp', sequenceNumber: 1, commandStatus: 0, systemId: 'SMSC' },
  bind_transceiver_resp: { command: 'bind_transceiver_resp', sequenceNumber: 1, commandStatus: 0, systemId: 'SMSC' },
  submit_sm: { ...submitSmDefaults(), sequenceNumber: 1, sourceAddr: 'Acme', destinationAddr: '447700900123', ...shortMessage },
  submit_sm_resp: { command: 'submit_sm_resp', sequenceNumber: 1, commandStatus: 0, messageId: 'abc' },
  deliver_sm: { ...submitSmDefaults(), command: 'deliver_sm', sequenceNumber: 1, sourceAddr: '447700900123', destinationAddr: '12345', ...shortMessage },
  deliver_sm_resp: { command: 'deliver_sm_resp', sequenceNumber: 1, commandStatus: 0, messageId: '' },
  data_sm: {
    command: 'data_sm', sequenceNumber: 1, commandStatus: 0, serviceType: '', sourceAddrTon: 1, sourceAddrNpi: 1, sourceAddr: '447700900123',
    destAddrTon: 0, destAddrNpi: 0, destinationAddr: '12345', esmClass: 0, registeredDelivery: 0, dataCoding: 0,
  },
  data_sm_resp: { command: 'data_sm_resp', sequenceNumber: 1, commandStatus: 0, messageId: 'abc' },
};

const FIELDS = cOctetFields();
const with_ = (command: string, field: string, value: string): Pdu => ({ ...BASE[command]!, [field]: value } as Pdu);

/** The SmppdError `encode` throws; fails the test when it encodes or throws anything else. */
function refusal(encode: () => unknown): { code: string; message: string; details: Record<string, unknown> } {
  try {
    encode();
  } catch (e) {
    if (isSmppdError(e)) return { code: e.code, message: e.message, details: { ...e.details } };
    throw e;
  }
  throw new Error('expected PDU_FIELD_INVALID');
}

/** A value of the field's own form with `bad` in it: 16 characters for a time, else short. */
function carrying(f: (typeof FIELDS)[number], bad: string): string {
  return f.time ? `0000010000${bad}000R`.slice(0, 16).padEnd(16, '0') : `A${bad}B`;
}

describe('the C-Octet Strings smppd encodes', () => {
  it('are every C-Octet String of every command in the codec tables, each with its SMPP v3.4 size', () => {
    const sizes = Object.fromEntries(FIELDS.map((f) => [`${f.command}.${f.snake}`, f.maxOctets]));
    expect(sizes).toEqual({
      'bind_transmitter.system_id': 16, 'bind_transmitter.password': 9, 'bind_transmitter.system_type': 13, 'bind_transmitter.address_range': 41,
      'bind_receiver.system_id': 16, 'bind_receiver.password': 9, 'bind_receiver.system_type': 13, 'bind_receiver.address_range': 41,
      'bind_transceiver.system_id': 16, 'bind_transceiver.password': 9, 'bind_transceiver.system_type': 13, 'bind_transceiver.address_range': 41,
      'bind_transmitter_resp.system_id': 16, 'bind_receiver_resp.system_id': 16, 'bind_transceiver_resp.system_id': 16,
      'submit_sm.service_type': 6, 'submit_sm.source_addr': 21, 'submit_sm.destination_addr': 21,
      'submit_sm.schedule_delivery_time': 17, 'submit_sm.validity_period': 17,
      'submit_sm_resp.message_id': 65,
      'deliver_sm.service_type': 6, 'deliver_sm.source_addr': 21, 'deliver_sm.destination_addr': 21,
      'deliver_sm.schedule_delivery_time': 1, 'deliver_sm.validity_period': 1,
      'deliver_sm_resp.message_id': 1,
      'data_sm.service_type': 6, 'data_sm.source_addr': 65, 'data_sm.destination_addr': 65,
      'data_sm_resp.message_id': 65,
    });
    expect(cOctetTlvs()).toEqual([{ key: 'receiptedMessageId', maxOctets: 65 }]);
    // Every command with a C-Octet String has a valid PDU here, so the walk below covers it.
    for (const f of FIELDS) expect(BASE[f.command], f.command).toBeDefined();
  });

  for (const f of FIELDS) {
    describe(`${f.command}.${f.snake}`, () => {
      const longest = f.time ? '000001000000000R' : 'x'.repeat(f.maxOctets - 1);

      it(`takes ${f.time ? 'a 16-character time or nothing' : `${f.maxOctets - 1} characters`} and reads them back`, () => {
        for (const value of [longest, '']) {
          const decoded = decodePdu(encodePdu(with_(f.command, f.field, value)));
          expect(decoded.ok && (decoded.pdu as unknown as Record<string, unknown>)[f.field]).toBe(value);
        }
      });

      it('refuses one character more', () => {
        const values = f.time ? ['000001000000000R0', '000001000000000'] : ['x'.repeat(f.maxOctets)];
        for (const value of values) {
          const r = refusal(() => encodePdu(with_(f.command, f.field, value)));
          expect(r).toMatchObject({ code: 'PDU_FIELD_INVALID', details: { command: f.command, field: f.snake, problem: 'length' } });
          expect(r.message).toContain(f.snake);
        }
      });

      it('refuses a NUL, which would end the field and shift the rest', () => {
        if (f.maxOctets === 1) return; // nothing fits, a NUL included: the length rule refuses it (above)
        const r = refusal(() => encodePdu(with_(f.command, f.field, carrying(f, '\0'))));
        expect(r).toMatchObject({ code: 'PDU_FIELD_INVALID', details: { field: f.snake, problem: 'nul' } });
      });

      it('refuses a character no octet carries (U+0100 would be written as a NUL)', () => {
        if (f.maxOctets === 1) return;
        for (const bad of ['\u0100', '€', '\ud83d']) {
          const r = refusal(() => encodePdu(with_(f.command, f.field, carrying(f, bad))));
          expect(r).toMatchObject({ code: 'PDU_FIELD_INVALID', details: { field: f.snake, problem: 'octet' } });
          // A password's characters are never shown; the others name the code for the operator.
          const code = `U+${bad.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
          if (f.snake === 'password') expect(r.message).not.toContain(code);
          else expect(r.message).toContain(code);
        }
      });
    });
  }

  describe('the TLV receipted_message_id', () => {
    const receipt = (id: string): Pdu => ({ ...BASE.deliver_sm!, tlvs: { receiptedMessageId: id, messageState: 2 } } as Pdu);

    it('takes 64 characters and reads them back', () => {
      const decoded = decodePdu(encodePdu(receipt('9'.repeat(64))));
      expect(decoded.ok && decoded.pdu.command === 'deliver_sm' && decoded.pdu.tlvs?.receiptedMessageId).toBe('9'.repeat(64));
    });

    it('refuses 65 characters, a NUL and a character past U+00FF', () => {
      for (const [id, problem] of [['9'.repeat(65), 'length'], ['ab\0cd', 'nul'], ['ab\u0141', 'octet']] as const) {
        expect(refusal(() => encodePdu(receipt(id)))).toMatchObject({ code: 'PDU_FIELD_INVALID', details: { field: 'receipted_message_id', problem } });
      }
    });
  });

  it('any string in any field either reads back unchanged or is refused with PDU_FIELD_INVALID', () => {
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 70 }),
      fc.string({ unit: fc.constantFrom('a', '0', '\0', 'é', '\u0100', '\u0141', '\ud800', 'R', '+'), maxLength: 70 }),
    );
    fc.assert(fc.property(fc.constantFrom(...FIELDS), text, (f, value) => {
      let bytes: Buffer;
      try {
        bytes = encodePdu(with_(f.command, f.field, value));
      } catch (e) {
        expect(isSmppdError(e, 'PDU_FIELD_INVALID')).toBe(true);
        return;
      }
      const decoded = decodePdu(bytes);
      expect(decoded.ok && (decoded.pdu as unknown as Record<string, unknown>)[f.field]).toBe(value);
      // The field's neighbours are as given: nothing shifted.
      expect(decoded.ok && decoded.pdu.command).toBe(f.command);
    }), { seed: 0x5eed_c0c7, numRuns: 400 });
  });
});
