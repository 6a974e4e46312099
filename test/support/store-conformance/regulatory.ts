import { describe, expect, it } from 'vitest';
import type { VendorTlv } from '../../../src/sms/regulatory.js';
import { newMessage } from '../sqlite-store.js';
import { storePerTest, type StoreFactory } from './harness.js';

const IDS = { peId: '1101234567890123456', templateId: '1107160000000000001', telemarketerId: '1702000000000000009' };
const tlv = (tag: number, id: string): VendorTlv => ({ tag, value: Buffer.from(`${id}\0`, 'latin1') });
const UP1_TLVS = [tlv(0x1400, IDS.peId), tlv(0x1401, IDS.templateId), tlv(0x1402, IDS.telemarketerId)];

export function describeRegulatory(factory: StoreFactory): void {
  describe('regulatory ids: kept with the message, its TLVs on every claim of it', () => {
    const t = storePerTest(factory);

    it('a message keeps its ids and TLVs across a restart: its claim carries the TLVs, one without them none', async () => {
      await t.store.accept({ messages: [newMessage('dlt', { partCount: 3, regulatory: IDS, vendorTlvs: UP1_TLVS }), newMessage('plain')], now: 1 });
      await t.reopen();
      const claimed = await t.store.claim('up1', 10, 10);
      expect(claimed.map((m) => m.id)).toEqual(['dlt', 'plain']);
      expect(claimed[0]!.vendorTlvs).toEqual(UP1_TLVS);
      expect(claimed[0]!.parts).toHaveLength(3);
      expect(claimed[1]!.vendorTlvs).toBeUndefined();
      expect(await t.rows('SELECT id, pe_id, template_id, telemarketer_id FROM messages ORDER BY seq')).toEqual([
        { id: 'dlt', pe_id: IDS.peId, template_id: IDS.templateId, telemarketer_id: IDS.telemarketerId },
        { id: 'plain', pe_id: null, template_id: null, telemarketer_id: null },
      ]);
    });

    it('a message accepted straight into the pool carries them too once requeued', async () => {
      const accepted = await t.store.accept({ messages: [newMessage('direct', { regulatory: { templateId: IDS.templateId }, vendorTlvs: [UP1_TLVS[1]!] })], claimed: true, now: 1 });
      // A store that claims on accept left it inflight: a restart's recovery puts it back in the queue.
      expect(accepted.claimed === true).toBe(t.store.claimsOnAccept === true);
      if (accepted.claimed === true) {
        await t.reopen();
        expect(await t.store.recoverInflight({ up1: 'resend' }, 2)).toBe(1);
      }
      const [claimed] = await t.store.claim('up1', 10, 10);
      expect(claimed?.vendorTlvs).toEqual([UP1_TLVS[1]]);
    });

    it('movable gives the ids; a move puts the new upstream\'s TLVs in place of the old, or none', async () => {
      await t.store.accept({ messages: [newMessage('a', { regulatory: IDS, vendorTlvs: UP1_TLVS }), newMessage('b', { regulatory: { peId: IDS.peId }, vendorTlvs: [UP1_TLVS[0]!] })], now: 1 });
      const movable = await t.store.movable('up1', 10, 5);
      expect(movable.map((m) => m.regulatory)).toEqual([IDS, { peId: IDS.peId }]);
      const up2Tlvs = [tlv(0x3000, IDS.peId), tlv(0x3001, IDS.templateId)];
      const base = { from: 'up1', upstream: 'up2', encoding: 'GSM-7' as const, registeredDelivery: 1, sourceTon: 5, sourceNpi: 0, parts: newMessage('x').parts };
      expect(await t.store.move([{ ...base, id: 'a', vendorTlvs: up2Tlvs }, { ...base, id: 'b' }], 6)).toEqual(['a', 'b']);
      await t.reopen();
      const claimed = await t.store.claim('up2', 10, 10);
      expect(claimed.map((m) => [m.id, m.vendorTlvs])).toEqual([['a', up2Tlvs], ['b', undefined]]);
      // The ids stay as the client gave them, for a later move.
      expect(await t.rows("SELECT pe_id, template_id FROM messages WHERE id = 'b'")).toEqual([{ pe_id: IDS.peId, template_id: null }]);
    });
  });
}
