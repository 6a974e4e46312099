import { describe, expect, it } from 'vitest';
import { isSmppdError } from '../../../src/core/errors.js';
import { MessageComposer, sourceAddress, type ComposeSettings } from '../../../src/dispatch/compose.js';

const SETTINGS: ComposeSettings = {
  defaultAlphabet: 'gsm7', nationalLanguageShift: false, longMessages: 'udh', udhReference: 8, maxParts: 10, requestReceipts: true,
};
const msg = { source: 'smppd', destination: '4915112345678' };

function refusal(f: () => unknown): { code: string; message: string } {
  try {
    f();
  } catch (e) {
    if (isSmppdError(e)) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('MessageComposer', () => {
  it('refuses messageType TEXT with characters outside GSM-7, naming them', () => {
    const r = refusal(() => new MessageComposer(SETTINGS).compose({ ...msg, text: 'Hello “world” — ok…', messageType: 'TEXT' }));
    expect(r.code).toBe('TEXT_NOT_GSM7');
    for (const c of ['“', '”', '—', '…']) expect(r.message).toContain(c);
  });

  it('refuses a message longer than maxParts up front', () => {
    const r = refusal(() => new MessageComposer({ ...SETTINGS, maxParts: 2 }).compose({ ...msg, text: 'a'.repeat(153 * 2 + 1) }));
    expect(r.code).toBe('MESSAGE_TOO_LONG');
    expect(r.message).toContain('3 parts');
  });

  it('refuses text the upstream default alphabet cannot carry when TEXT is asked for', () => {
    const r = refusal(() => new MessageComposer({ ...SETTINGS, defaultAlphabet: 'ascii' }).compose({ ...msg, text: 'Grüße', messageType: 'TEXT' }));
    expect(r.code).toBe('TEXT_NOT_REPRESENTABLE');
  });

  it('fills the submit_sm fields: addresses, receipt request, validity, data_coding', () => {
    const { parts, encoding } = new MessageComposer(SETTINGS).compose({ ...msg, text: 'hello', validityHours: 30 });
    expect(encoding).toBe('GSM-7');
    expect(parts).toHaveLength(1);
    expect(parts[0]).toMatchObject({
      command: 'submit_sm', sourceAddr: 'smppd', sourceAddrTon: 5, sourceAddrNpi: 0, destinationAddr: '4915112345678', destAddrTon: 1, destAddrNpi: 1,
      registeredDelivery: 1, validityPeriod: '000001060000000R', dataCoding: 0, esmClass: 0,
    });
    expect(parts[0]!.shortMessage).toEqual(Buffer.from('hello'));
    const quiet = new MessageComposer({ ...SETTINGS, requestReceipts: false }).compose({ ...msg, text: 'hello' });
    expect(quiet.parts[0]!.registeredDelivery).toBe(0);
    expect(quiet.parts[0]!.validityPeriod).toBe('');
  });

  it('rotates the concatenation reference per long message only, wrapping at 16 bits', () => {
    const c = new MessageComposer({ ...SETTINGS, udhReference: 16 }, 0xffff);
    const long = { ...msg, text: 'b'.repeat(200) };
    const ref = (text: typeof long) => c.compose(text).parts[0]!.shortMessage.readUInt16BE(3);
    expect(ref(long)).toBe(0xffff);
    expect(c.compose({ ...msg, text: 'one part' }).parts).toHaveLength(1);
    expect(ref(long)).toBe(0);
    expect(ref(long)).toBe(1);
  });

  it('payload mode sends one submit_sm with message_payload and an empty short_message', () => {
    const { parts } = new MessageComposer({ ...SETTINGS, longMessages: 'payload' }).compose({ ...msg, text: 'c'.repeat(400) });
    expect(parts).toHaveLength(1);
    expect(parts[0]!.shortMessage.length).toBe(0);
    expect(parts[0]!.tlvs?.messagePayload?.length).toBe(400);
  });
});

describe('sourceAddress', () => {
  it('alphanumeric, short code and full number', () => {
    expect(sourceAddress('MyShop')).toEqual({ ton: 5, npi: 0 });
    expect(sourceAddress('12345')).toEqual({ ton: 3, npi: 0 });
    expect(sourceAddress('4917000000001')).toEqual({ ton: 1, npi: 1 });
  });

  it("takes each kind's TON/NPI from the upstream's settings", () => {
    const sourceAddressing = { alphanumeric: { ton: 5, npi: 9 }, international: { ton: 1, npi: 8 }, shortCode: { ton: 0, npi: 1 } };
    const composer = new MessageComposer({ ...SETTINGS, sourceAddress: sourceAddressing });
    const first = (source: string) => composer.compose({ ...msg, source, text: 'hi' }).parts[0]!;
    expect(first('MyShop')).toMatchObject({ sourceAddr: 'MyShop', sourceAddrTon: 5, sourceAddrNpi: 9 });
    expect(first('4917000000001')).toMatchObject({ sourceAddrTon: 1, sourceAddrNpi: 8 });
    expect(first('12345')).toMatchObject({ sourceAddrTon: 0, sourceAddrNpi: 1 });
  });

  it('refuses a sender ID no network carries with VALIDATION naming senderId, whoever calls the composer', () => {
    for (const source of ['AB\u0000CD', 'Żabka', 'ABCDEFGHIJKL', '+4917000000', '0170000000001', '12', '']) {
      const r = refusal(() => new MessageComposer(SETTINGS).compose({ ...msg, source, text: 'hi' }));
      expect(r.code).toBe('VALIDATION');
      expect(r.message).toMatch(/^senderId: /);
    }
  });
});
