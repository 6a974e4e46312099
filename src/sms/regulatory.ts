/**
 * The regulatory ids a message may carry (messaging-service-api.md §4.1: peId, templateId,
 * telemarketerId; India's DLT registration requires them), and how they travel over SMPP: each
 * as a vendor-specific optional parameter whose tag the upstream's operator assigns
 * (`upstreams[].regulatoryTlvs`). Pure: ids and tags in, TLVs out.
 *
 * The value is a C-Octet String (SMPP v3.4 §3.1): the id's ASCII characters and a NUL. The DLT
 * SMPP interface specifications of the Indian operators give PE_ID (0x1400), TEMPLATE_ID (0x1401)
 * and TM_ID (0x1402) as C-Octet Strings of the registry's numeric ids; ESMEs send them as strings
 * (python-smpplib issue #204 passes `{5120: '1107…', 5121: '1101…'}`).
 */

export const REGULATORY_FIELDS = ['peId', 'templateId', 'telemarketerId'] as const;
export type RegulatoryField = (typeof REGULATORY_FIELDS)[number];

/** The ids a send gave, each absent when not given. */
export type RegulatoryIds = Partial<Record<RegulatoryField, string>>;

/** An upstream's tag for each field it sends; a field without a tag is not sent to it. */
export type RegulatoryTags = Partial<Record<RegulatoryField, number>>;

/** SMPP v3.4 §5.3.2, the ranges of tags: 0x1400–0x3FFF are "reserved for SMSC Vendor specific optional parameters". */
export const VENDOR_TLV_MIN = 0x1400;
export const VENDOR_TLV_MAX = 0x3fff;

/** One optional parameter as it goes on the wire: its tag and its value's octets. */
export interface VendorTlv {
  tag: number;
  value: Buffer;
}

/** The regulatory part of a message for one upstream. */
export interface RegulatoryTlvs {
  /** In field order (peId, templateId, telemarketerId): one per given id the upstream has a tag for. */
  tlvs: VendorTlv[];
  /** Given ids the upstream has no tag for: not sent. */
  unsent: RegulatoryField[];
}

/** The ids `ids` gives, in field order. */
export function givenFields(ids: RegulatoryIds | undefined): RegulatoryField[] {
  return REGULATORY_FIELDS.filter((f) => ids?.[f] !== undefined);
}

/** The fields `tags` maps (what an upstream with `requireRegulatory` requires) that `ids` lacks, in field order. */
export function missingFields(ids: RegulatoryIds | undefined, tags: RegulatoryTags | undefined): RegulatoryField[] {
  return REGULATORY_FIELDS.filter((f) => tags?.[f] !== undefined && ids?.[f] === undefined);
}

/**
 * Why `id` cannot travel as a C-Octet String value, or null: it must be printable ASCII
 * (U+0020–U+007E). A registry id is digits; a NUL would end the value early, and an SMSC reads
 * the octets as ASCII.
 */
export function regulatoryIdProblem(id: string): string | null {
  if (id.length === 0) return 'must not be empty';
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return `must be printable ASCII to travel over SMPP; character ${i + 1} is not`;
  }
  return null;
}

/** The TLVs of `ids` for an upstream with `tags`. The ids are checked (`regulatoryIdProblem`) before. */
export function regulatoryTlvs(ids: RegulatoryIds | undefined, tags: RegulatoryTags | undefined): RegulatoryTlvs {
  const tlvs: VendorTlv[] = [];
  const unsent: RegulatoryField[] = [];
  for (const field of REGULATORY_FIELDS) {
    const id = ids?.[field];
    if (id === undefined) continue;
    const tag = tags?.[field];
    if (tag === undefined) unsent.push(field);
    else tlvs.push({ tag, value: cOctetString(id) });
  }
  return { tlvs, unsent };
}

/** SMPP v3.4 §3.1: the characters, one octet each, then a NUL. */
function cOctetString(id: string): Buffer {
  const out = Buffer.alloc(id.length + 1);
  out.write(id, 0, 'latin1');
  return out;
}
