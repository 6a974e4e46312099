/**
 * Matching the SMSC message id of a submit_sm_resp (SMPP v3.4 §4.4.2) with the id a receipt
 * names (the receipted_message_id TLV, §5.3.2.12, or the `id:` of the text, Appendix B).
 * SMSCs differ: some write the same id in both, some change case or pad with zeros, some write
 * it in hex in one PDU and in decimal in the other. Ids may be longer than 64 bits, so numbers
 * are BigInts. Raw ids are kept everywhere else; these keys are for lookups only. Pure.
 *
 * The key of a part is its submit_sm_resp id, normalised (`responseKey`): it does not depend on
 * the format, so the store indexes each part by ONE key, even while the format is being learned.
 * A receipt id is turned into the key(s) it could stand for (`candidateKeys`).
 */

/**
 * How a receipt writes the id, per upstream (`receiptIdFormat`):
 * - same: as submit_sm_resp did, up to case and leading zeros.
 * - hex: in hex, while submit_sm_resp gave it in decimal ('1710' in the response, '6AE' in the receipt).
 * - decimal: in decimal, while submit_sm_resp gave it in hex ('6AE' in the response, '1710' in the receipt).
 * - auto: not known; learnt from the first receipts (`IdFormatLearner`).
 * Default: auto.
 */
export type ReceiptIdFormat = 'auto' | 'same' | 'hex' | 'decimal';
export type KnownIdFormat = Exclude<ReceiptIdFormat, 'auto'>;

/** In the order `candidateKeys` tries them in auto: the plain reading first. */
export const KNOWN_ID_FORMATS: readonly KnownIdFormat[] = ['same', 'hex', 'decimal'];

const HEX = /^[0-9a-f]+$/i;
const DECIMAL = /^[0-9]+$/;

/**
 * The id as text for comparison: surrounding whitespace and NULs removed, lower case, leading
 * zeros removed ('0' stays '0'). The empty string means "no id".
 */
export function normalizeId(id: string): string {
  const s = id.replace(/^[\s\0]+|[\s\0]+$/g, '').toLowerCase();
  if (s === '') return '';
  return s.replace(/^0+/, '') || '0';
}

/** Hex digits (any case, any length, leading zeros allowed) as decimal digits; null when not hex. */
export function hexToDecimal(hex: string): string | null {
  return HEX.test(hex) ? BigInt(`0x${hex}`).toString(10) : null;
}

/** Decimal digits (any length, leading zeros allowed) as lower-case hex digits; null when not decimal. */
export function decimalToHex(decimal: string): string | null {
  return DECIMAL.test(decimal) ? BigInt(decimal).toString(16) : null;
}

/** The key a part is stored under: its submit_sm_resp id, normalised. The same in every format. */
export function responseKey(responseId: string): string {
  return normalizeId(responseId);
}

/**
 * The key a receipt id stands for when the receipt writes ids in `format`: equal keys mean the
 * same message. An id that is not a number in the base the format says (a 'hex' receipt id
 * with a 'g') is compared as written, as in 'same'.
 */
export function receiptKey(receiptId: string, format: KnownIdFormat): string {
  const id = normalizeId(receiptId);
  switch (format) {
    case 'same':
      return id;
    case 'hex':
      return hexToDecimal(id) ?? id;
    case 'decimal':
      return decimalToHex(id) ?? id;
  }
}

/** `responseKey` or `receiptKey`, by the side the id comes from. */
export function matchKey(id: string, side: 'response' | 'receipt', format: KnownIdFormat): string {
  return side === 'response' ? responseKey(id) : receiptKey(id, format);
}

/**
 * The keys to look a receipt's part up by: one when the format is known; in auto, one per
 * reading (same, hex, decimal), without repeats. None for an empty id, which matches nothing.
 */
export function candidateKeys(receiptId: string, format: ReceiptIdFormat): string[] {
  if (normalizeId(receiptId) === '') return [];
  if (format !== 'auto') return [receiptKey(receiptId, format)];
  return [...new Set(KNOWN_ID_FORMATS.map((f) => receiptKey(receiptId, f)))];
}

/** The readings under which `receiptId` names the part whose submit_sm_resp id was `responseId`. */
export function formatsMatching(responseId: string, receiptId: string): KnownIdFormat[] {
  const key = responseKey(responseId);
  if (key === '') return [];
  return KNOWN_ID_FORMATS.filter((f) => receiptKey(receiptId, f) === key);
}

/**
 * Learns an upstream's id format in auto mode. Until it has settled, `candidateKeys` gives every
 * reading; the caller looks each key up and reports which found a part (`observeLookup`), or
 * reports a (response id, receipt id) pair matched by other means (`observePair`). Evidence
 * counts only when exactly one reading explains the match ('0A' and '10' are hex/decimal of
 * each other, but '7' reads the same in all three and says nothing). After `agree`
 * consecutive observations for the same reading (default 3) the format settles and stays;
 * a different reading in between starts the count again. Pure: no I/O, no clock.
 */
export class IdFormatLearner {
  readonly #agree: number;
  #settled: KnownIdFormat | null;
  #streak: { format: KnownIdFormat; count: number } | null = null;

  /** `initial`: a configured format (settles at once) or 'auto'. `agree`: observations to settle, at least 1. */
  constructor(initial: ReceiptIdFormat = 'auto', agree = 3) {
    this.#agree = Math.max(1, Math.floor(agree));
    this.#settled = initial === 'auto' ? null : initial;
  }

  /** The settled format, or null while still learning. */
  get format(): KnownIdFormat | null {
    return this.#settled;
  }

  candidateKeys(receiptId: string): string[] {
    return candidateKeys(receiptId, this.#settled ?? 'auto');
  }

  /** `foundKeys`: which of `candidateKeys(receiptId)` found a part. Returns the settled format, if any. */
  observeLookup(receiptId: string, foundKeys: readonly string[]): KnownIdFormat | null {
    const found = new Set(foundKeys);
    return this.#record(KNOWN_ID_FORMATS.filter((f) => found.has(receiptKey(receiptId, f))));
  }

  /** A pair known to be the same message. Returns the settled format, if any. */
  observePair(responseId: string, receiptId: string): KnownIdFormat | null {
    return this.#record(formatsMatching(responseId, receiptId));
  }

  #record(readings: readonly KnownIdFormat[]): KnownIdFormat | null {
    if (this.#settled !== null) return this.#settled;
    const [only, ...rest] = readings;
    if (only === undefined || rest.length > 0) return null; // no match, or ambiguous: no evidence
    this.#streak = this.#streak?.format === only ? { format: only, count: this.#streak.count + 1 } : { format: only, count: 1 };
    if (this.#streak.count >= this.#agree) this.#settled = only;
    return this.#settled;
  }
}
