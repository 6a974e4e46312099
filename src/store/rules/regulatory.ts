/**
 * What both stores keep of a message's regulatory ids (sms/regulatory.ts), decided once: the ids
 * as the client gave them (`messages.pe_id`, `template_id`, `telemarketer_id`), so a failover can
 * compose the message again in its new upstream's tags, and the TLVs composed for the upstream it
 * is on (`messages.vendor_tlvs`), which every submit_sm of the message carries. The TLVs are kept
 * in their wire form, one after another (SMPP v3.4 §3.1: a 2-octet tag, a 2-octet length, the
 * value), NULL when there are none.
 */
import { ErrorCode, SmppdError } from '../../core/errors.js';
import type { RegulatoryIds, VendorTlv } from '../../sms/regulatory.js';
import type { Migration } from './migrations.js';

/** Migration 14 (listed in each store's `migrations.ts`; never edited once released), as both dialects write it. */
export function regulatoryMigration(blob: 'BLOB' | 'BYTEA'): Migration {
  return {
    version: 14,
    name: 'regulatory ids',
    // Nullable columns without a default: no rewrite of the table, NULL for every message before.
    sql: `
ALTER TABLE messages ADD COLUMN pe_id TEXT;
ALTER TABLE messages ADD COLUMN template_id TEXT;
ALTER TABLE messages ADD COLUMN telemarketer_id TEXT;
ALTER TABLE messages ADD COLUMN vendor_tlvs ${blob};
`,
  };
}

/** The columns of a message that hold its ids. */
export interface RegulatoryColumns {
  pe_id: string | null;
  template_id: string | null;
  telemarketer_id: string | null;
}

export function regulatoryColumns(ids: RegulatoryIds | undefined): RegulatoryColumns {
  return { pe_id: ids?.peId ?? null, template_id: ids?.templateId ?? null, telemarketer_id: ids?.telemarketerId ?? null };
}

export function regulatoryIds(r: RegulatoryColumns): RegulatoryIds {
  return {
    ...(r.pe_id !== null ? { peId: r.pe_id } : {}),
    ...(r.template_id !== null ? { templateId: r.template_id } : {}),
    ...(r.telemarketer_id !== null ? { telemarketerId: r.telemarketer_id } : {}),
  };
}

/** The TLVs one after another as on the wire; null for none. */
export function packTlvs(tlvs: readonly VendorTlv[] | undefined): Buffer | null {
  if (tlvs === undefined || tlvs.length === 0) return null;
  const out = Buffer.alloc(tlvs.reduce((n, t) => n + 4 + t.value.length, 0));
  let offset = 0;
  for (const t of tlvs) {
    out.writeUInt16BE(t.tag, offset);
    out.writeUInt16BE(t.value.length, offset + 2);
    // A value that crossed a worker boundary is a Uint8Array: `set` takes either.
    out.set(t.value, offset + 4);
    offset += 4 + t.value.length;
  }
  return out;
}

/** `packTlvs` undone; throws INTERNAL for bytes it did not write. */
export function unpackTlvs(packed: Uint8Array | null): VendorTlv[] {
  if (packed === null) return [];
  const bytes = Buffer.from(packed.buffer, packed.byteOffset, packed.byteLength);
  const tlvs: VendorTlv[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    if (offset + 4 > bytes.length) throw new SmppdError(ErrorCode.INTERNAL, 'a stored vendor_tlvs column is cut short');
    const length = bytes.readUInt16BE(offset + 2);
    const end = offset + 4 + length;
    if (end > bytes.length) throw new SmppdError(ErrorCode.INTERNAL, 'a stored vendor_tlvs column is cut short');
    tlvs.push({ tag: bytes.readUInt16BE(offset), value: Buffer.from(bytes.subarray(offset + 4, end)) });
    offset = end;
  }
  return tlvs;
}
