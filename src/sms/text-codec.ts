/**
 * Text out of short_message bytes by data_coding (SMPP v3.4 §5.2.19, with the GSM 03.38
 * coding groups of TS 23.038 §4 above 0xBF). The bytes are the user data without its UDH.
 */
import { decodeGsm7, type Gsm7Tables } from './gsm7.js';
import { decodeUcs2 } from './ucs2.js';
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
  const charset = charsetOf(dataCoding, defaultAlphabet);
  switch (charset) {
    case 'gsm7':
      return decodeGsm7(bytes, tablesOf(nationalShift));
    case 'ascii':
    case 'latin1':
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
    case 'ucs2':
      return decodeUcs2(bytes);
    case 'cyrillic':
      return new TextDecoder('iso-8859-5').decode(bytes);
    case 'hebrew':
      return new TextDecoder('iso-8859-8').decode(bytes);
    case 'binary':
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
  }
}

function tablesOf(shift: NationalShift | undefined): Gsm7Tables {
  return { locking: shift?.locking ?? 0, single: shift?.single ?? 0 };
}
