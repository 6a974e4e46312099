/**
 * Text out of short_message bytes by data_coding (SMPP v3.4 §5.2.19, with the GSM 03.38
 * coding groups of TS 23.038 §4 above 0xBF). The bytes are the user data without its UDH.
 */
import { decodeGsm7, GSM7_ESCAPE, type Gsm7Tables } from './gsm7.js';
import { decodeUcs2, UCS2_UNIT_OCTETS, unpairedSurrogateAt } from './ucs2.js';
import type { NationalShift } from './udh.js';

/**
 * What data_coding 0 means on an upstream (DESIGN.md, "SMPP facts"): GSM 03.38 septets one
 * per octet in most SMSCs, ISO-8859-1 or 7-bit ASCII in some. A per-upstream setting.
 */
export type DefaultAlphabet = 'gsm7' | 'latin1' | 'ascii';

/** data_coding values smppd writes or names (SMPP v3.4 §5.2.19). */
export const DataCoding = {
  SMSC_DEFAULT: 0x00,
  IA5: 0x01,
  BINARY: 0x02,
  LATIN1: 0x03,
  BINARY_4: 0x04,
  CYRILLIC: 0x06,
  HEBREW: 0x07,
  UCS2: 0x08,
} as const;

/** How the bytes of a data_coding are read. */
export type Charset = 'gsm7' | 'ascii' | 'latin1' | 'ucs2' | 'cyrillic' | 'hebrew' | 'binary';

/**
 * The charset of `dataCoding`. Anything not text that smppd can read (binary 2 and 4,
 * JIS, pictogram, ISO-2022-JP, KS C 5601, reserved values) is 'binary'.
 */
export function charsetOf(dataCoding: number, defaultAlphabet: DefaultAlphabet): Charset {
  switch (dataCoding) {
    case DataCoding.SMSC_DEFAULT:
      return defaultAlphabet;
    case DataCoding.IA5:
      return 'ascii';
    case DataCoding.LATIN1:
      return 'latin1';
    case DataCoding.UCS2:
      return 'ucs2';
    case DataCoding.CYRILLIC:
      return 'cyrillic';
    case DataCoding.HEBREW:
      return 'hebrew';
  }
  // Text the air interface carried in GSM 7-bit reaches an ESME in the SMSC's default
  // representation, so the 7-bit groups below decode like data_coding 0.
  const group = dataCoding & 0xf0;
  // TS 23.038 §4, Message Waiting Indication groups: 1100 (discard) and 1101 (store) carry
  // text in the default alphabet, 1110 (store) in UCS-2.
  if (group === 0xc0 || group === 0xd0) return defaultAlphabet;
  if (group === 0xe0) return 'ucs2';
  // TS 23.038 §4, Data coding/message class group 1111: bit 2 set = 8-bit data, clear = GSM 7-bit.
  if (group === 0xf0) return (dataCoding & 0x04) !== 0 ? 'binary' : defaultAlphabet;
  return 'binary';
}

/**
 * What made user data undecodable as its data_coding says (the text is then a best effort):
 * - UDH_INVALID: esm_class announces a UDH (UDHI) but its length octets run past the data
 *   (TS 23.040 §9.2.3.24); the whole user data was read as text;
 * - UCS2_ODD_LENGTH: UCS-2 in an odd number of octets; the last one became U+FFFD;
 * - UCS2_UNPAIRED_SURROGATE: UCS-2 with half a surrogate pair (UTF-16, RFC 2781 §2.2);
 * - INVALID_BYTES: an octet its alphabet does not have (above 0x7F in GSM 7-bit unpacked or
 *   IA5, an ESC with nothing after it, an unassigned ISO-8859-8 position): U+FFFD, or for IA5
 *   the Latin-1 character; or a NUL (0x00 in IA5, Latin-1 and ISO-8859, U+0000 in UCS-2): no
 *   text, and no PostgreSQL text column holds one, so it becomes U+FFFD.
 */
export const DECODE_PROBLEMS = ['UDH_INVALID', 'UCS2_ODD_LENGTH', 'UCS2_UNPAIRED_SURROGATE', 'INVALID_BYTES'] as const;
export type DecodeProblem = (typeof DECODE_PROBLEMS)[number];

/** Text and what was wrong with the bytes; `problems` is empty when they decoded cleanly. */
export interface DecodedUserData {
  readonly text: string;
  readonly problems: readonly DecodeProblem[];
}

/**
 * Decodes the user data (UDH already stripped) of one part.
 *
 * - gsm7: unpacked septets, with the national shift tables from the part's UDH if any;
 * - ascii (IA5): read as Latin-1, so a byte above 0x7F from a careless SMSC keeps its likely meaning;
 * - binary: lowercase hex, no prefix. A caller that must tell data from text asks `charsetOf`.
 */
export function decodeShortMessage(
  bytes: Uint8Array,
  dataCoding: number,
  defaultAlphabet: DefaultAlphabet,
  nationalShift?: NationalShift,
): string {
  return decodeByCharset(bytes, dataCoding, defaultAlphabet, nationalShift).text;
}

/**
 * `decodeShortMessage`, and what in the bytes its data_coding does not allow (`DecodeProblem`),
 * as text that can be stored: a NUL becomes U+FFFD (`INVALID_BYTES`).
 */
export function decodeUserData(
  bytes: Uint8Array,
  dataCoding: number,
  defaultAlphabet: DefaultAlphabet,
  nationalShift?: NationalShift,
): DecodedUserData {
  const decoded = decodeByCharset(bytes, dataCoding, defaultAlphabet, nationalShift);
  // A NUL left in the text would make the message unstorable in PostgreSQL: the SMSC, answered
  // with a temporary error, would deliver it again for ever. The bytes stay in the flagged message.
  if (!decoded.text.includes(NUL)) return decoded;
  const problems = decoded.problems.includes('INVALID_BYTES') ? decoded.problems : [...decoded.problems, 'INVALID_BYTES' as const];
  return { text: decoded.text.replaceAll(NUL, '\ufffd'), problems };
}

const NUL = '\u0000';

function decodeByCharset(
  bytes: Uint8Array,
  dataCoding: number,
  defaultAlphabet: DefaultAlphabet,
  nationalShift: NationalShift | undefined,
): DecodedUserData {
  const charset = charsetOf(dataCoding, defaultAlphabet);
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (charset) {
    case 'gsm7':
      return { text: decodeGsm7(bytes, tablesOf(nationalShift)), problems: gsm7Valid(bytes) ? [] : ['INVALID_BYTES'] };
    case 'ascii':
      return { text: view.toString('latin1'), problems: view.every((b) => b <= 0x7f) ? [] : ['INVALID_BYTES'] };
    case 'latin1':
      return { text: view.toString('latin1'), problems: [] };
    case 'ucs2': {
      const text = decodeUcs2(bytes);
      const problems: DecodeProblem[] = [];
      if (bytes.length % UCS2_UNIT_OCTETS !== 0) problems.push('UCS2_ODD_LENGTH');
      if (unpairedSurrogateAt(text) >= 0) problems.push('UCS2_UNPAIRED_SURROGATE');
      return { text, problems };
    }
    case 'cyrillic':
      return decodeIso8859(bytes, 'iso-8859-5');
    case 'hebrew':
      return decodeIso8859(bytes, 'iso-8859-8');
    case 'binary':
      return { text: view.toString('hex'), problems: [] };
  }
}

/** Unpacked septets fit in 7 bits, and an escape (TS 23.038 §6.2.1.1) has a septet after it. */
function gsm7Valid(septets: Uint8Array): boolean {
  for (let i = 0; i < septets.length; i++) {
    const code = septets[i] ?? 0;
    if (code > 0x7f) return false;
    if (code === GSM7_ESCAPE && ++i >= septets.length) return false;
    if ((septets[i] ?? 0) > 0x7f) return false;
  }
  return true;
}

function decodeIso8859(bytes: Uint8Array, label: 'iso-8859-5' | 'iso-8859-8'): DecodedUserData {
  try {
    return { text: new TextDecoder(label, { fatal: true }).decode(bytes), problems: [] };
  } catch {
    return { text: new TextDecoder(label).decode(bytes), problems: ['INVALID_BYTES'] };
  }
}

function tablesOf(shift: NationalShift | undefined): Gsm7Tables {
  return { locking: shift?.locking ?? 0, single: shift?.single ?? 0 };
}
