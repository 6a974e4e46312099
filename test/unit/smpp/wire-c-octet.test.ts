/**
 * Every C-Octet String of every PDU smppd encodes, walked from the codec's own tables: a NUL, a
 * character no octet carries and one character too many each fail with PDU_FIELD_INVALID before
 * anything is written; the longest value the field holds passes and reads back unchanged. A time
 * must have the form of SMPP v3.4 §7.1.1, a short_message at most 254 octets, and a password
 * refused is described without its length or the place of its bad character.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSmppdError } from '../../../src/core/errors.js';
import { submitSmDefaults, type Pdu } from '../../../src/smpp/pdu.js';
import { cOctetFields, cOctetTlvs, decodePdu, encodePdu } from '../../../src/smpp/wire.js';
import { MAX_VALIDITY_HOURS, validityPeriod } from '../../../src/sms/smpp-time.js';

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

describe('short_message', () => {
  for (const command of ['submit_sm', 'deliver_sm'] as const) {
    it(`${command}: takes 254 octets and reads them back; refuses 255 (sm_length, SMPP v3.4 §4.4.1)`, () => {
      const full = Buffer.alloc(254, 0x41);
      const decoded = decodePdu(encodePdu({ ...BASE[command]!, shortMessage: full } as Pdu));
      expect(decoded.ok && (decoded.pdu as unknown as { shortMessage: Buffer }).shortMessage).toEqual(full);
      for (const octets of [255, 300]) {
        const r = refusal(() => encodePdu({ ...BASE[command]!, shortMessage: Buffer.alloc(octets, 0x41) } as Pdu));
        expect(r).toMatchObject({ code: 'PDU_FIELD_INVALID', details: { command, field: 'short_message', problem: 'length' } });
        expect(r.message).toBe(`cannot encode ${command}: short_message is ${octets} octets; at most 254 (sm_length, SMPP v3.4 §4.4.1); longer text goes in parts or message_payload`);
      }
    });
  }
});

describe('schedule_delivery_time and validity_period have the form of SMPP v3.4 §7.1.1', () => {
  const fields = ['scheduleDeliveryTime', 'validityPeriod'] as const;
  const submit = (field: string, value: string): Pdu => with_('submit_sm', field, value);

  it('take absolute times (+ and -, nn up to 48) and relative ones (R with t 0 and nn 00), and read them back', () => {
    for (const value of ['261231235959948+', '260101000000000-', '990228120000048-', '000101000000000+', '000001000000000R', '991231595959000R', '000000000000000R']) {
      for (const field of fields) {
        const decoded = decodePdu(encodePdu(submit(field, value)));
        expect(decoded.ok && (decoded.pdu as unknown as Record<string, unknown>)[field], value).toBe(value);
      }
    }
  });

  it('take every validity smppd writes', () => {
    for (let hours = 1; hours <= MAX_VALIDITY_HOURS; hours++) expect(() => encodePdu(submit('validityPeriod', validityPeriod(hours)))).not.toThrow();
  });

  it('refuse anything else of 16 characters, naming the field and what is wrong', () => {
    const refused: Array<[string, string]> = [
      ['261301000000000+', 'its month MM is not 01–12'],
      ['260001000000000+', 'its month MM is not 01–12'],
      ['260100000000000-', 'its day DD is not 01–31'],
      ['260132000000000+', 'its day DD is not 01–31'],
      ['260101240000000+', 'its hhmmss is not a time of day'],
      ['260101006000000+', 'its hhmmss is not a time of day'],
      ['260101000060000+', 'its hhmmss is not a time of day'],
      ['260101000000049+', 'its offset nn is more than 48 quarter hours'],
      ['2601010000000000', "its last character p is not '+', '-' or 'R'"],
      ['000001000000000r', "its last character p is not '+', '-' or 'R'"],
      ['26010100000A000+', 'its first 15 characters are not all digits'],
      ['2601010000 0000+', 'its first 15 characters are not all digits'],
      ['260101000000x00-', 'its first 15 characters are not all digits'],
      ['00000100000000+R', 'its first 15 characters are not all digits'],
      ['000001000000100R', "a relative time ('R') has t 0 and nn 00"],
      ['000001000000001R', "a relative time ('R') has t 0 and nn 00"],
      ['000001000000040R', "a relative time ('R') has t 0 and nn 00"],
    ];
    for (const [value, why] of refused) {
      for (const [field, snake] of [['scheduleDeliveryTime', 'schedule_delivery_time'], ['validityPeriod', 'validity_period']] as const) {
        const r = refusal(() => encodePdu(submit(field, value)));
        expect(r, value).toMatchObject({ code: 'PDU_FIELD_INVALID', details: { command: 'submit_sm', field: snake, problem: 'format' } });
        expect(r.message).toBe(`cannot encode submit_sm: ${snake} is not an SMPP time YYMMDDhhmmsstnnp: ${why} (SMPP v3.4 §7.1.1)`);
      }
    }
  });
});

describe('a password refused', () => {
  const bind = (password: string): Pdu => with_('bind_transceiver', 'password', password);

  it('is described the same whatever its length or the place of the bad character: nothing of the secret is told', () => {
    const tooLong = ['123456789', 'p'.repeat(30)].map((p) => refusal(() => encodePdu(bind(p))).message);
    expect(new Set(tooLong).size).toBe(1);
    expect(tooLong[0]).toBe('cannot encode bind_transceiver: password is too long; at most 8 fit its 9 octets with the NUL (SMPP v3.4 §4)');
    const nul = ['\0abc', 'abcdef\0'].map((p) => refusal(() => encodePdu(bind(p))).message);
    expect(new Set(nul).size).toBe(1);
    expect(nul[0]).toBe('cannot encode bind_transceiver: password holds a NUL, which would end the C-Octet String there (SMPP v3.4 §3.1)');
    const octet = ['\u0100', 'abcde\u20ac'].map((p) => refusal(() => encodePdu(bind(p))).message);
    expect(new Set(octet).size).toBe(1);
    expect(octet[0]).toBe('cannot encode bind_transceiver: password holds a character past U+00FF; a C-Octet String carries one octet per character');
  });

  it('other fields still say how long they are and where the bad character is', () => {
    expect(refusal(() => encodePdu(with_('bind_transceiver', 'systemId', 's'.repeat(17)))).message).toContain('system_id is 17 characters');
    expect(refusal(() => encodePdu(with_('bind_transceiver', 'systemId', 'ab\0'))).message).toContain('system_id holds a NUL at character 3');
  });
});
