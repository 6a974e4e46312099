/**
 * The User Data Header (3GPP TS 23.040 §9.2.3.24): a length octet (UDHL) followed by
 * information elements (IEI, IEDL, data). It sits at the start of short_message (or
 * message_payload) when esm_class has UDHI (0x40) set (SMPP v3.4 §5.2.12).
 */

/** The information elements smppd writes and reads. */
export const IEI = {
  /** Concatenated short messages, 8-bit reference (TS 23.040 §9.2.3.24.1). */
  CONCAT_8: 0x00,
  /** Concatenated short messages, 16-bit reference (TS 23.040 §9.2.3.24.8). */
  CONCAT_16: 0x08,
  /** National Language Single Shift (TS 23.040 §9.2.3.24.15). */
  NATIONAL_SINGLE_SHIFT: 0x24,
  /** National Language Locking Shift (TS 23.040 §9.2.3.24.16). */
  NATIONAL_LOCKING_SHIFT: 0x25,
} as const;

/** esm_class bit 6: the message starts with a UDH (SMPP v3.4 §5.2.12). */
export const ESM_CLASS_UDHI = 0x40;

/** One information element; `data` is its value without IEI and length. */
export interface UdhElement {
  readonly iei: number;
  readonly data: Buffer;
}

export interface ConcatInfo {
  /** The concatenation reference, 0..255 or 0..65535 by `referenceBits`. */
  readonly ref: number;
  /** Parts in the message, 1..255. */
  readonly total: number;
  /** This part's number, 1..total. */
  readonly seq: number;
  readonly referenceBits: 8 | 16;
}

/** Language identifiers (TS 23.038 §6.2.1.2); absent = the default alphabet / extension table. */
export interface NationalShift {
  readonly locking?: number;
  readonly single?: number;
}

export interface ParsedUdh {
  /** Octets of the header including the UDHL octet itself. */
  readonly udhLength: number;
  readonly elements: readonly UdhElement[];
  readonly concat?: ConcatInfo;
  readonly nationalShift?: NationalShift;
  /** What follows the header. */
  readonly body: Buffer;
}

/**
 * Parses the UDH at the start of `userData`. Returns undefined when the header is malformed
 * (UDHL or an element length running past the data): the caller then treats the whole
 * thing as body rather than losing the message.
 */
export function parseUdh(userData: Buffer): ParsedUdh | undefined {
  const udhl = userData[0];
  if (udhl === undefined || 1 + udhl > userData.length) return undefined;
  const elements: UdhElement[] = [];
  let offset = 1;
  const end = 1 + udhl;
  while (offset < end) {
    const iei = userData[offset];
    const length = userData[offset + 1];
    if (iei === undefined || length === undefined || offset + 2 + length > end) return undefined;
    elements.push({ iei, data: userData.subarray(offset + 2, offset + 2 + length) });
    offset += 2 + length;
  }
  let concat: ConcatInfo | undefined;
  let locking: number | undefined;
  let single: number | undefined;
  // TS 23.040 §9.2.3.24: when an element that may appear once is repeated, the last one counts.
  for (const e of elements) {
    if (e.iei === IEI.CONCAT_8 || e.iei === IEI.CONCAT_16) concat = readConcat(e) ?? concat;
    else if (e.iei === IEI.NATIONAL_SINGLE_SHIFT && e.data.length === 1) single = e.data[0];
    else if (e.iei === IEI.NATIONAL_LOCKING_SHIFT && e.data.length === 1) locking = e.data[0];
  }
  const nationalShift =
    locking === undefined && single === undefined
      ? undefined
      : { ...(locking === undefined ? {} : { locking }), ...(single === undefined ? {} : { single }) };
  return {
    udhLength: end,
    elements,
    ...(concat ? { concat } : {}),
    ...(nationalShift ? { nationalShift } : {}),
    body: userData.subarray(end),
  };
}

function readConcat(e: UdhElement): ConcatInfo | undefined {
  const d = e.data;
  const wide = e.iei === IEI.CONCAT_16;
  if (d.length !== (wide ? 4 : 3)) return undefined;
  const ref = wide ? d.readUInt16BE(0) : (d[0] ?? 0);
  const total = d[wide ? 2 : 1] ?? 0;
  const seq = d[wide ? 3 : 2] ?? 0;
  // TS 23.040 §9.2.3.24.1: a zero total, or a sequence number of zero or above the total,
  // makes the receiver ignore the whole element.
  if (total === 0 || seq === 0 || seq > total) return undefined;
  return { ref, total, seq, referenceBits: wide ? 16 : 8 };
}

/** Builds a UDH (UDHL + elements). An empty list gives an empty buffer: no header at all. */
export function buildUdh(elements: readonly UdhElement[]): Buffer {
  if (elements.length === 0) return Buffer.alloc(0);
  const body = Buffer.concat(elements.map((e) => Buffer.concat([Buffer.from([e.iei, e.data.length]), e.data])));
  if (body.length > 0xff) throw new RangeError(`UDH of ${body.length} octets does not fit its length octet`);
  return Buffer.concat([Buffer.from([body.length]), body]);
}

/** The concatenation element: `00 03 ref total seq` or `08 04 refHi refLo total seq`. */
export function concatElement(ref: number, total: number, seq: number, referenceBits: 8 | 16): UdhElement {
  if (referenceBits === 16) {
    return { iei: IEI.CONCAT_16, data: Buffer.from([(ref >> 8) & 0xff, ref & 0xff, total, seq]) };
  }
  return { iei: IEI.CONCAT_8, data: Buffer.from([ref & 0xff, total, seq]) };
}

/** The national language elements for `shift`: locking (0x25) first, then single (0x24). */
export function nationalShiftElements(shift: NationalShift): UdhElement[] {
  const out: UdhElement[] = [];
  if (shift.locking !== undefined && shift.locking !== 0) {
    out.push({ iei: IEI.NATIONAL_LOCKING_SHIFT, data: Buffer.from([shift.locking]) });
  }
  if (shift.single !== undefined && shift.single !== 0) {
    out.push({ iei: IEI.NATIONAL_SINGLE_SHIFT, data: Buffer.from([shift.single]) });
  }
  return out;
}

/** Octets a UDH holding `elements` takes, UDHL included; 0 for no elements. */
export function udhOctets(elements: readonly UdhElement[]): number {
  return elements.length === 0 ? 0 : 1 + elements.reduce((n, e) => n + 2 + e.data.length, 0);
}

/**
 * Septets of the 160 a UDH of `octets` costs in a GSM 7-bit message: the SMSC packs the
 * header and pads to a septet boundary (TS 23.040 §9.2.3.24, fill bits), so ceil(octets*8/7).
 */
export function udhSeptets(octets: number): number {
  return Math.ceil((octets * 8) / 7);
}
