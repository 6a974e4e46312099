/**
 * The regulatory ids on the wire: composed into the upstream's vendor TLVs on every part, in each
 * long-message mode; refused when the upstream requires them; said once in the log when the
 * upstream has no tag for them; and carried by a message that goes from its accept straight to the
 * pool (the PostgreSQL store's direct send).
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { isSmppdError } from '../../../src/core/errors.js';
import type { Log } from '../../../src/core/log.js';
import { Acceptor } from '../../../src/dispatch/accept.js';
import { MessageComposer, type ComposeSettings } from '../../../src/dispatch/compose.js';
import { submitParts } from '../../../src/dispatch/outcome-recorder.js';
import type { SubmitSmPdu } from '../../../src/smpp/pdu.js';
import { decodePdu, encodePdu } from '../../../src/smpp/wire.js';
import type { ClaimedMessage } from '../../../src/store/claims.js';
import type { AcceptRequest } from '../../../src/store/intake.js';

const SETTINGS: ComposeSettings = {
  defaultAlphabet: 'gsm7', nationalLanguageShift: false, longMessages: 'udh', udhReference: 8, maxParts: 10, requestReceipts: true,
};
const TAGS = { peId: 0x1400, templateId: 0x1401, telemarketerId: 0x1402 };
const IDS = { peId: '1101234567890123456', templateId: '1107160000000000001', telemarketerId: '1702000000000000009' };
const msg = { source: 'BRAND', destination: '919812345678' };
const LONG = 'x'.repeat(400);

/** The vendor TLVs of a part as [tag, value as text]. */
const vendor = (p: { tlvs?: SubmitSmPdu['tlvs'] }) => (p.tlvs?.other ?? []).map((t) => [t.tag, t.value.toString('latin1')]);
const EXPECTED = [[0x1400, `${IDS.peId}\0`], [0x1401, `${IDS.templateId}\0`], [0x1402, `${IDS.telemarketerId}\0`]];

function refusal(f: () => unknown): { code: string; message: string } {
  try {
    f();
  } catch (e) {
    if (isSmppdError(e)) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('MessageComposer with regulatoryTlvs', () => {
  it('puts the three ids, each a C-Octet String in its tag, on every part in each long-message mode', () => {
    for (const longMessages of ['udh', 'sar', 'payload'] as const) {
      const { parts, vendorTlvs, unsentRegulatory } = new MessageComposer({ ...SETTINGS, longMessages, regulatoryTlvs: TAGS }).compose({ ...msg, text: LONG, regulatory: IDS });
      expect(parts).toHaveLength(longMessages === 'payload' ? 1 : 3);
      for (const p of parts) expect(vendor(p)).toEqual(EXPECTED);
      expect(vendorTlvs.map((t) => t.tag)).toEqual([0x1400, 0x1401, 0x1402]);
      expect(unsentRegulatory).toEqual([]);
    }
  });

  it('sends what the upstream maps and reports the rest unsent; without a mapping, nothing', () => {
    const some = new MessageComposer({ ...SETTINGS, regulatoryTlvs: { templateId: 0x3fff } }).compose({ ...msg, text: 'hi', regulatory: IDS });
    expect(vendor(some.parts[0]!)).toEqual([[0x3fff, `${IDS.templateId}\0`]]);
    expect(some.unsentRegulatory).toEqual(['peId', 'telemarketerId']);
    const none = new MessageComposer(SETTINGS).compose({ ...msg, text: 'hi', regulatory: { peId: IDS.peId } });
    expect(none.parts[0]!.tlvs).toBeUndefined();
    expect(none.unsentRegulatory).toEqual(['peId']);
  });

  it('with requireRegulatory refuses a send without a mapped field, naming each missing one', () => {
    const composer = new MessageComposer({ ...SETTINGS, regulatoryTlvs: { peId: 0x1400, templateId: 0x1401 }, requireRegulatory: true });
    const r = refusal(() => composer.compose({ ...msg, text: 'hi', regulatory: { telemarketerId: 'tm' } }));
    expect(r.code).toBe('VALIDATION');
    expect(r.message).toBe('peId: is required by the upstream this destination is sent through; templateId: is required by the upstream this destination is sent through');
    // A field the upstream does not map is not required.
    expect(composer.compose({ ...msg, text: 'hi', regulatory: { peId: 'p', templateId: 't' } }).parts).toHaveLength(1);
  });

  it('refuses an id that is not printable ASCII when it would go on the wire, naming the field', () => {
    const r = refusal(() => new MessageComposer({ ...SETTINGS, regulatoryTlvs: TAGS }).compose({ ...msg, text: 'hi', regulatory: { templateId: '11071é' } }));
    expect(r).toEqual({ code: 'VALIDATION', message: 'templateId: must be printable ASCII to travel over SMPP; character 6 is not' });
  });

  it('the codec writes them after the named TLVs and reads them back with their tags (golden hex of the tail)', () => {
    const [part] = new MessageComposer({ ...SETTINGS, regulatoryTlvs: { peId: 0x1400, templateId: 0x1401 } }).compose({ ...msg, text: 'hi', regulatory: { peId: '12', templateId: '7' } }).parts;
    const bytes = encodePdu({ ...part!, sequenceNumber: 1 });
    // 0x1400, length 3, "12\0"; 0x1401, length 2, "7\0".
    expect(bytes.subarray(bytes.length - 13).toString('hex')).toBe('14000003313200' + '140100023700');
    const decoded = decodePdu(bytes);
    expect(decoded.ok && decoded.pdu.command === 'submit_sm' ? vendor(decoded.pdu) : null).toEqual([[0x1400, '12\0'], [0x1401, '7\0']]);
  });
});

describe('Acceptor with regulatory ids', () => {
  function acceptor(upstreams: Array<{ name: string; compose: ComposeSettings }>, warnings: unknown[]) {
    const handed: ClaimedMessage[] = [];
    const accepted: AcceptRequest[] = [];
    const log = { warn: (fields: unknown) => warnings.push(fields), child: () => log } as unknown as Log;
    const a = new Acceptor({
      store: {
        claimsOnAccept: true,
        accept: async (r) => { accepted.push(r); return { batchId: null, scheduleId: null, ...(r.claimed === true ? { claimed: true } : {}) }; },
        queueDepth: async () => ({ queued: 0, byClient: [] }),
      },
      upstreams, clock: new ManualClock(), maxQueued: 1000, log,
      admit: () => ({ direct: true, handOver: (m) => handed.push(m), done: () => {} }),
    });
    return { a, handed, accepted };
  }

  it('a message sent straight to the pool carries the TLVs on every part, and stores its ids', async () => {
    const { a, handed, accepted } = acceptor([{ name: 'dlt', compose: { ...SETTINGS, regulatoryTlvs: TAGS } }], []);
    await a.send({ client: 'c', senderId: 'BRAND', destination: msg.destination, message: LONG, messageType: 'TEXT', regulatory: IDS });
    expect(accepted[0]!.messages[0]!.regulatory).toEqual(IDS);
    const parts = submitParts(handed[0]!);
    expect(parts).toHaveLength(3);
    for (const p of parts) expect(vendor(p)).toEqual(EXPECTED);
  });

  it('says once per upstream, by field name only, that ids go to an upstream without tags for them', async () => {
    const warnings: unknown[] = [];
    const { a } = acceptor([{ name: 'plain', compose: SETTINGS }], warnings);
    const send = (regulatory?: typeof IDS) => a.send({ client: 'c', senderId: 'BRAND', destination: msg.destination, message: 'hi', messageType: 'TEXT', ...(regulatory ? { regulatory } : {}) });
    await send();
    expect(warnings).toEqual([]);
    await send(IDS);
    await send(IDS);
    expect(warnings).toEqual([{ event: 'regulatory_fields_not_sent', upstream: 'plain', fields: ['peId', 'templateId', 'telemarketerId'] }]);
    expect(JSON.stringify(warnings)).not.toContain(IDS.peId);
  });
});
