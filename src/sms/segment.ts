/**
 * Text to submit_sm parts: picks GSM-7 or UCS-2, splits at the provider's limits and
 * frames long messages by UDH, SAR TLVs or message_payload (SMPP v3.4 §5.3.2.22–24, §5.3.2.32).
 */
import {
  chooseNationalShift,
  charSeptets,
  DEFAULT_TABLES,
  encodeGsm7,
  isGsm7,
  NATIONAL_LANGUAGES,
  nonGsmCharacters,
  type Gsm7Tables,
  type NationalLanguage,
} from './gsm7.js';
import { DataCoding, type DefaultAlphabet } from './text-codec.js';
import { encodeUcs2, UCS2_UNIT_OCTETS, unpairedSurrogateAt } from './ucs2.js';
import {
  buildUdh,
  concatElement,
  ESM_CLASS_UDHI,
  udhOctets,
  udhSeptets,
  type UdhElement,
} from './udh.js';

export type MessageType = 'TEXT' | 'UNICODE' | 'AUTO';
export type Encoding = 'GSM-7' | 'UNICODE';
export type LongMessageMode = 'udh' | 'sar' | 'payload';

export interface EncodeOptions {
  /** TEXT: GSM-7 or refuse; UNICODE: always UCS-2; AUTO: GSM-7 when it can, else UCS-2. */
  readonly messageType: MessageType;
  /** What data_coding 0 carries on this upstream (see DefaultAlphabet). */
  readonly defaultAlphabet: DefaultAlphabet;
  /**
   * Use national language shift tables (TS 23.038 Annex A) to keep text out of UCS-2:
   * true for every language smppd knows, or a list of identifiers. Only with the gsm7
   * default alphabet: the tables are a property of septets, not of Latin-1 or ASCII bytes.
   */
  readonly nationalShift: boolean | readonly NationalLanguage[];
  /** How a message of more than one part travels. */
  readonly longMessages: LongMessageMode;
  /** Concatenation reference width in udh mode: IE 0x00 (8) or IE 0x08 (16). */
  readonly udhReferenceBits: 8 | 16;
  /** Most parts allowed, 1..255 (a UDH or SAR total is one octet). */
  readonly maxParts: number;
  /** Concatenation reference the caller rotates per upstream; masked to 8 or 16 bits. */
  readonly reference: number;
}

export interface EncodedPart {
  readonly dataCoding: number;
  /** 0x40 (UDHI) when the short_message or message_payload starts with a UDH, else 0. */
  readonly esmClass: number;
  readonly shortMessage: Buffer;
  /** sar_msg_ref_num (16-bit), sar_total_segments, sar_segment_seqnum (SMPP v3.4 §5.3.2.22–24). */
  readonly sar?: { readonly refNum: number; readonly total: number; readonly seq: number };
  readonly messagePayload?: Buffer;
}

export type EncodeError =
  | { readonly code: 'NOT_GSM7'; readonly message: string; readonly characters: string[] }
  | { readonly code: 'TOO_MANY_PARTS'; readonly message: string; readonly parts: number; readonly maxParts: number }
  | { readonly code: 'NOT_REPRESENTABLE'; readonly message: string; readonly characters: string[] };

export type EncodeResult =
  | {
      readonly ok: true;
      readonly encoding: Encoding;
      readonly dataCoding: number;
      readonly parts: EncodedPart[];
      /** The tables used when national shift kept the text in GSM-7. */
      readonly nationalShift?: Gsm7Tables;
    }
  | { readonly ok: false; readonly error: EncodeError };

/** Septets (GSM-7) or UTF-16 code units (UCS-2) in one part. */
export interface SegmentLimits {
  /** When the whole text fits in one message. */
  readonly single: number;
  /** Per part once it is split. */
  readonly perPart: number;
}

/** The one-message user data: 140 octets, 160 septets (TS 23.040 §9.2.3.16, §9.2.3.24). */
const USER_DATA_OCTETS = 140;
const USER_DATA_SEPTETS = 160;
/** A UDH part count and sequence number are one octet each. */
const MAX_PARTS = 255;

/**
 * The limits for an encoding, given the concatenation reference width and any national
 * shift elements that ride in every part's UDH. With an 8-bit reference: GSM-7 160 / 153,
 * UCS-2 70 / 67; with 16-bit: 160 / 152 and 70 / 66. A UDH of N octets costs ceil(N*8/7)
 * septets of the 160 and N octets of the 140.
 */
export function segmentLimits(
  encoding: Encoding,
  referenceBits: 8 | 16 = 8,
  shiftElements: readonly UdhElement[] = [],
): SegmentLimits {
  const singleUdh = udhOctets(shiftElements);
  const concat = concatElement(0, 1, 1, referenceBits);
  const multiUdh = udhOctets([concat, ...shiftElements]);
  if (encoding === 'GSM-7') {
    return { single: USER_DATA_SEPTETS - udhSeptets(singleUdh), perPart: USER_DATA_SEPTETS - udhSeptets(multiUdh) };
  }
  return {
    single: Math.floor((USER_DATA_OCTETS - singleUdh) / UCS2_UNIT_OCTETS),
    perPart: Math.floor((USER_DATA_OCTETS - multiUdh) / UCS2_UNIT_OCTETS),
  };
}

/**
 * Splits `text` into the texts of its parts. The units are code points, each weighed in
 * septets (an extension character is 2: ESC and its code stay together, TS 23.038 §6.2.1.1)
 * or in UTF-16 code units (an astral character is 2: a surrogate pair stays together).
 * Greedy: a part takes units while they fit. Empty text is one empty part.
 */
export function splitText(
  text: string,
  encoding: Encoding,
  limits: SegmentLimits,
  tables: Gsm7Tables = DEFAULT_TABLES,
): string[] {
  const units = [...text];
  const weights = units.map((u) => (encoding === 'GSM-7' ? (charSeptets(u, tables) ?? 1) : u.length));
  const total = weights.reduce((a, b) => a + b, 0);
  if (total <= limits.single) return [text];
  const parts: string[] = [];
  let current = '';
  let used = 0;
  units.forEach((unit, i) => {
    const w = weights[i] ?? 0;
    if (used + w > limits.perPart) {
      parts.push(current);
      current = '';
      used = 0;
    }
    current += unit;
    used += w;
  });
  parts.push(current);
  return parts;
}

interface EncodingChoice {
  readonly encoding: Encoding;
  readonly tables: Gsm7Tables;
  readonly shiftElements: readonly UdhElement[];
}

/** Encodes `text` into the parts to submit, or says why it cannot. */
export function encodeMessage(text: string, options: EncodeOptions): EncodeResult {
  // Half a surrogate pair is no character: UCS-2 would carry it as D800 and GSM-7 not at all.
  const lone = unpairedSurrogateAt(text);
  if (lone >= 0) {
    const unit = text[lone]!;
    return {
      ok: false,
      error: { code: 'NOT_REPRESENTABLE', message: `message holds an unpaired UTF-16 surrogate (${show([unit])}) at character ${lone + 1}, which no encoding carries`, characters: [unit] },
    };
  }
  const choice = chooseEncoding(text, options);
  if ('code' in choice) return { ok: false, error: choice };
  const { encoding, tables, shiftElements } = choice;
  // SAR and payload carry no concatenation IE, but keep the 8-bit UDH limits so the part
  // count is the same as identify() and udh mode give.
  const referenceBits = options.longMessages === 'udh' ? options.udhReferenceBits : 8;
  const texts = splitText(text, encoding, segmentLimits(encoding, referenceBits, shiftElements), tables);
  const maxParts = Math.min(Math.max(1, Math.trunc(options.maxParts)), MAX_PARTS);
  if (texts.length > maxParts) {
    return {
      ok: false,
      error: {
        code: 'TOO_MANY_PARTS',
        message: `message needs ${texts.length} parts; at most ${maxParts} are allowed`,
        parts: texts.length,
        maxParts,
      },
    };
  }
  const bodies: Buffer[] = [];
  for (const t of texts) {
    const body = encodeBody(t, encoding, options.defaultAlphabet, tables);
    if (!Buffer.isBuffer(body)) return { ok: false, error: body };
    bodies.push(body);
  }
  const dataCoding = encoding === 'GSM-7' ? DataCoding.SMSC_DEFAULT : DataCoding.UCS2;
  const parts = frameParts(bodies, dataCoding, shiftElements, options);
  return {
    ok: true,
    encoding,
    dataCoding,
    parts,
    ...(shiftElements.length > 0 ? { nationalShift: tables } : {}),
  };
}

/** Frames the part bodies for `options.longMessages`: UDH, SAR TLVs or one message_payload. */
function frameParts(
  bodies: readonly Buffer[],
  dataCoding: number,
  shiftElements: readonly UdhElement[],
  options: EncodeOptions,
): EncodedPart[] {
  const shiftUdh = buildUdh(shiftElements);
  const shiftEsm = shiftElements.length > 0 ? ESM_CLASS_UDHI : 0;
  const single = (body: Buffer): EncodedPart => ({
    dataCoding,
    esmClass: shiftEsm,
    shortMessage: Buffer.concat([shiftUdh, body]),
  });
  const total = bodies.length;
  switch (options.longMessages) {
    case 'udh': {
      const bits = options.udhReferenceBits;
      const ref = mask(options.reference, bits);
      return bodies.map((body, i) =>
        total === 1
          ? single(body)
          : {
              dataCoding,
              esmClass: ESM_CLASS_UDHI,
              shortMessage: Buffer.concat([buildUdh([concatElement(ref, total, i + 1, bits), ...shiftElements]), body]),
            },
      );
    }
    case 'sar': {
      // sar_msg_ref_num is an Integer(2) (SMPP v3.4 §5.3.2.22).
      const refNum = mask(options.reference, 16);
      return bodies.map((body, i) =>
        total === 1 ? single(body) : { ...single(body), sar: { refNum, total, seq: i + 1 } },
      );
    }
    case 'payload':
      // message_payload replaces short_message, which is then empty (SMPP v3.4 §5.3.2.32);
      // the parts split on character boundaries, so their bodies join into the whole text.
      return [
        {
          dataCoding,
          esmClass: shiftEsm,
          shortMessage: Buffer.alloc(0),
          messagePayload: Buffer.concat([shiftUdh, ...bodies]),
        },
      ];
  }
}

function mask(reference: number, bits: 8 | 16): number {
  const n = Number.isFinite(reference) ? Math.trunc(reference) : 0;
  return n & (bits === 16 ? 0xffff : 0xff);
}

const UNICODE: EncodingChoice = { encoding: 'UNICODE', tables: DEFAULT_TABLES, shiftElements: [] };

function chooseEncoding(text: string, o: EncodeOptions): EncodingChoice | EncodeError {
  if (o.messageType === 'UNICODE') return UNICODE;
  const languages = shiftLanguages(o);
  const gsm = isGsm7(text)
    ? { tables: DEFAULT_TABLES, elements: [] }
    : languages.length > 0
      ? chooseNationalShift(text, languages)
      : undefined;
  if (!gsm) {
    if (o.messageType === 'AUTO') return UNICODE;
    const characters = unencodable(text, languages);
    return {
      code: 'NOT_GSM7',
      message: `message contains characters outside GSM-7: ${show(characters)}; send it as UNICODE`,
      characters,
    };
  }
  if (o.defaultAlphabet !== 'gsm7') {
    const characters = notIn(text, o.defaultAlphabet === 'latin1' ? 0xff : 0x7f);
    if (characters.length > 0) {
      if (o.messageType === 'AUTO') return UNICODE;
      return {
        code: 'NOT_REPRESENTABLE',
        message:
          `message contains characters the upstream's default alphabet (${o.defaultAlphabet}) ` +
          `cannot carry: ${show(characters)}; send it as UNICODE`,
        characters,
      };
    }
  }
  return { encoding: 'GSM-7', tables: gsm.tables, shiftElements: gsm.elements };
}

function shiftLanguages(o: EncodeOptions): readonly number[] {
  if (o.defaultAlphabet !== 'gsm7' || o.nationalShift === false) return [];
  return o.nationalShift === true ? NATIONAL_LANGUAGES : o.nationalShift;
}

/**
 * The characters no enabled table can encode. When each one alone is encodable but no one
 * combination of tables takes them all, every character outside the default alphabet.
 */
function unencodable(text: string, languages: readonly number[]): string[] {
  const outside = nonGsmCharacters(text);
  if (languages.length === 0) return outside;
  const never = outside.filter((ch) => chooseNationalShift(ch, languages) === undefined);
  return never.length > 0 ? never : outside;
}

/** Distinct code points above `max`, in order of first appearance. */
function notIn(text: string, max: number): string[] {
  return [...new Set([...text].filter((ch) => (ch.codePointAt(0) ?? 0) > max))];
}

/** Characters for a message a person reads: invisible ones as U+XXXX. */
function show(characters: readonly string[]): string {
  return characters
    .map((ch) => {
      const cp = ch.codePointAt(0) ?? 0;
      const invisible = cp < 0x20 || (cp >= 0x7f && cp <= 0xa0) || /\s/u.test(ch) || (cp >= 0xd800 && cp <= 0xdfff);
      return invisible ? `U+${cp.toString(16).toUpperCase().padStart(4, '0')}` : ch;
    })
    .join(' ');
}

/** The body bytes of one part: UCS-2BE, or data_coding 0 bytes by the upstream's default alphabet. */
function encodeBody(
  text: string,
  encoding: Encoding,
  alphabet: DefaultAlphabet,
  tables: Gsm7Tables,
): Buffer | EncodeError {
  if (encoding === 'UNICODE') return encodeUcs2(text);
  // chooseEncoding has checked the characters against the alphabet and tables.
  if (alphabet !== 'gsm7') return Buffer.from(text, 'latin1');
  const r = encodeGsm7(text, tables);
  if (r.ok) return r.septets;
  return {
    code: 'NOT_GSM7',
    message: `message contains characters outside GSM-7: ${show(r.characters)}; send it as UNICODE`,
    characters: r.characters,
  };
}
