/**
 * GSM 7-bit default alphabet and its extension table (3GPP TS 23.038 §6.2.1, §6.2.1.1),
 * with the national language shift tables of Annex A for Turkish, Spanish and Portuguese.
 *
 * Septets are unpacked, one per octet, as SMPP data_coding 0 carries them to an SMSC whose
 * default alphabet is GSM 03.38; the SMSC packs them for the air interface.
 */
import { nationalShiftElements, type UdhElement } from './udh.js';

/** The escape to the extension (single shift) table (TS 23.038 §6.2.1.1). */
export const GSM7_ESCAPE = 0x1b;

/** National language identifiers (TS 23.038 §6.2.1.2). 0 means the default tables. */
export const NationalLanguage = { TURKISH: 1, SPANISH: 2, PORTUGUESE: 3 } as const;
export type NationalLanguage = (typeof NationalLanguage)[keyof typeof NationalLanguage];
export const NATIONAL_LANGUAGES: readonly NationalLanguage[] = [1, 2, 3];

/**
 * Which tables encode a text: `locking` picks the basic table (a National Language Locking
 * Shift table, TS 23.038 Annex A.3), `single` the table reached by ESC (a National Language
 * Single Shift table, Annex A.2). 0 is the default alphabet / default extension table.
 */
export interface Gsm7Tables {
  readonly locking: number;
  readonly single: number;
}
export const DEFAULT_TABLES: Gsm7Tables = { locking: 0, single: 0 };

/** Marks the escape position in a basic table: no character is encoded there. */
const NONE = '\uffff';

// TS 23.038 §6.2.1, Figure 1: the default alphabet, value order, one row per 16 codes.
const DEFAULT_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅå' +
  'Δ_ΦΓΛΩΠΨΣΘΞ' + NONE + 'ÆæßÉ' +
  ' !"#¤%&\'()*+,-./' +
  '0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNO' +
  'PQRSTUVWXYZÄÖÑÜ§' +
  '¿abcdefghijklmno' +
  'pqrstuvwxyzäöñüà';

// TS 23.038 Annex A.3: the locking shift tables are the default alphabet with these codes
// replaced (checked position by position against a second transcription of A.3.1 and A.3.3). Spanish has only a single
// shift table (A.2.2): a locking shift naming it leaves the default alphabet in force.
const LOCKING_OVERRIDES: Readonly<Record<number, Readonly<Record<number, string>>>> = {
  // A.3.1 Turkish National Language Locking Shift Table
  1: { 0x04: '€', 0x07: 'ı', 0x0b: 'Ğ', 0x0c: 'ğ', 0x1c: 'Ş', 0x1d: 'ş', 0x40: 'İ', 0x60: 'ç' },
  // A.3.3 Portuguese National Language Locking Shift Table
  3: {
    0x04: 'ê', 0x06: 'ú', 0x07: 'í', 0x08: 'ó', 0x09: 'ç', 0x0b: 'Ô', 0x0c: 'ô', 0x0e: 'Á',
    0x0f: 'á', 0x12: 'ª', 0x13: 'Ç', 0x14: 'À', 0x15: '∞', 0x16: '^', 0x17: '\\', 0x18: '€',
    0x19: 'Ó', 0x1a: '|', 0x1c: 'Â', 0x1d: 'â', 0x1e: 'Ê', 0x24: 'º', 0x40: 'Í', 0x5b: 'Ã',
    0x5c: 'Õ', 0x5d: 'Ú', 0x60: '~', 0x7b: 'ã', 0x7c: 'õ', 0x7d: '`',
  },
};

// TS 23.038 §6.2.1.1: the default extension table. 0x0A is the page break (form feed);
// 0x0D (CR2) and 0x1B (a further extension) have no character and are not written.
const DEFAULT_EXTENSION: Readonly<Record<number, string>> = {
  0x0a: '\f', 0x14: '^', 0x28: '{', 0x29: '}', 0x2f: '\\', 0x3c: '[', 0x3d: '~', 0x3e: ']', 0x40: '|', 0x65: '€',
};

// TS 23.038 Annex A.2: the national language single shift tables, in full.
const SINGLE_SHIFT: Readonly<Record<number, Readonly<Record<number, string>>>> = {
  0: DEFAULT_EXTENSION,
  // A.2.1 Turkish National Language Single Shift Table
  1: {
    ...DEFAULT_EXTENSION,
    0x47: 'Ğ', 0x49: 'İ', 0x53: 'Ş', 0x63: 'ç', 0x67: 'ğ', 0x69: 'ı', 0x73: 'ş',
  },
  // A.2.2 Spanish National Language Single Shift Table
  2: {
    ...DEFAULT_EXTENSION,
    0x09: 'ç', 0x41: 'Á', 0x49: 'Í', 0x4f: 'Ó', 0x55: 'Ú', 0x61: 'á', 0x69: 'í', 0x6f: 'ó', 0x75: 'ú',
  },
  // A.2.3 Portuguese National Language Single Shift Table
  3: {
    ...DEFAULT_EXTENSION,
    0x05: 'ê', 0x09: 'ç', 0x0b: 'Ô', 0x0c: 'ô', 0x0e: 'Á', 0x0f: 'á', 0x12: 'Φ', 0x13: 'Γ',
    0x15: 'Ω', 0x16: 'Π', 0x17: 'Ψ', 0x18: 'Σ', 0x19: 'Θ', 0x1f: 'Ê', 0x41: 'À', 0x49: 'Í',
    0x4f: 'Ó', 0x55: 'Ú', 0x5b: 'Ã', 0x5c: 'Õ', 0x61: 'Â', 0x69: 'í', 0x6f: 'ó', 0x75: 'ú',
    0x7b: 'ã', 0x7c: 'õ', 0x7f: 'â',
  },
};

interface Table {
  readonly decode: readonly string[];
  readonly encode: ReadonlyMap<string, number>;
}

function basicTable(overrides: Readonly<Record<number, string>>): Table {
  const decode = [...DEFAULT_BASIC];
  for (const [code, ch] of Object.entries(overrides)) decode[Number(code)] = ch;
  return tableOf(decode);
}

function shiftTable(entries: Readonly<Record<number, string>>): Table {
  const decode: string[] = new Array<string>(128).fill(NONE);
  for (const [code, ch] of Object.entries(entries)) decode[Number(code)] = ch;
  return tableOf(decode);
}

function tableOf(decode: string[]): Table {
  const encode = new Map<string, number>();
  decode.forEach((ch, code) => {
    if (ch !== NONE && !encode.has(ch)) encode.set(ch, code);
  });
  return { decode, encode };
}

// Built once from the constants above and never changed.
const BASIC_TABLES: ReadonlyMap<number, Table> = new Map([
  [0, basicTable({})],
  [1, basicTable(LOCKING_OVERRIDES[1] ?? {})],
  [3, basicTable(LOCKING_OVERRIDES[3] ?? {})],
]);
const SHIFT_TABLES: ReadonlyMap<number, Table> = new Map(
  Object.entries(SINGLE_SHIFT).map(([id, entries]) => [Number(id), shiftTable(entries)]),
);

/** The languages that have a locking shift table, and those that have a single shift table. */
export const LOCKING_LANGUAGES: readonly number[] = [...BASIC_TABLES.keys()].filter((id) => id !== 0);
export const SINGLE_LANGUAGES: readonly number[] = [...SHIFT_TABLES.keys()].filter((id) => id !== 0);

// TS 23.038 §6.2.1.2: an identifier without a table means the default one.
function basicOf(tables: Gsm7Tables): Table {
  return BASIC_TABLES.get(tables.locking) ?? (BASIC_TABLES.get(0) as Table);
}
function shiftOf(tables: Gsm7Tables): Table {
  return SHIFT_TABLES.get(tables.single) ?? (SHIFT_TABLES.get(0) as Table);
}

/**
 * Septets `ch` (one UTF-16 code unit) takes: 1 in the basic table, 2 via ESC in the
 * single shift table, undefined when the tables cannot encode it.
 */
export function charSeptets(ch: string, tables: Gsm7Tables = DEFAULT_TABLES): 1 | 2 | undefined {
  if (basicOf(tables).encode.has(ch)) return 1;
  if (shiftOf(tables).encode.has(ch)) return 2;
  return undefined;
}

/** Septets the whole text takes, or undefined when a character is not encodable. */
export function gsm7Septets(text: string, tables: Gsm7Tables = DEFAULT_TABLES): number | undefined {
  let n = 0;
  for (const ch of text) {
    const s = charSeptets(ch, tables);
    if (s === undefined) return undefined;
    n += s;
  }
  return n;
}

export function isGsm7(text: string, tables: Gsm7Tables = DEFAULT_TABLES): boolean {
  return gsm7Septets(text, tables) !== undefined;
}

/** The characters (code points) the tables cannot encode: distinct, in order of first appearance. */
export function nonGsmCharacters(text: string, tables: Gsm7Tables = DEFAULT_TABLES): string[] {
  const seen = new Set<string>();
  for (const ch of text) {
    if (!seen.has(ch) && charSeptets(ch, tables) === undefined) seen.add(ch);
  }
  return [...seen];
}

export type Gsm7EncodeResult =
  | { readonly ok: true; readonly septets: Buffer }
  | { readonly ok: false; readonly characters: string[] };

/** Unpacked septets, one per octet; extension characters as ESC + code (TS 23.038 §6.2.1.1). */
export function encodeGsm7(text: string, tables: Gsm7Tables = DEFAULT_TABLES): Gsm7EncodeResult {
  const basic = basicOf(tables);
  const shift = shiftOf(tables);
  const out: number[] = [];
  for (const ch of text) {
    const b = basic.encode.get(ch);
    if (b !== undefined) {
      out.push(b);
      continue;
    }
    const s = shift.encode.get(ch);
    if (s === undefined) return { ok: false, characters: nonGsmCharacters(text, tables) };
    out.push(GSM7_ESCAPE, s);
  }
  return { ok: true, septets: Buffer.from(out) };
}

/**
 * Decodes unpacked septets. Lenient, as a receiver must be:
 * - ESC + a code the single shift table does not define gives the basic table's character
 *   for that code (TS 23.038 §6.2.1.1, note on unknown extension codes);
 * - ESC ESC (reserved for a further extension table) gives a space, as §6.2.1.1 asks;
 * - a trailing ESC is dropped; an octet above 0x7F (not a septet) gives U+FFFD.
 */
export function decodeGsm7(septets: Uint8Array, tables: Gsm7Tables = DEFAULT_TABLES): string {
  const basic = basicOf(tables).decode;
  const shift = shiftOf(tables).decode;
  let out = '';
  for (let i = 0; i < septets.length; i++) {
    const code = septets[i] ?? 0;
    if (code > 0x7f) {
      out += '\ufffd';
    } else if (code !== GSM7_ESCAPE) {
      out += basic[code] ?? '\ufffd';
    } else {
      const next = septets[++i];
      if (next === undefined) break;
      if (next > 0x7f) out += '\ufffd';
      else if (next === GSM7_ESCAPE) out += ' ';
      else {
        const ext = shift[next] ?? NONE;
        out += ext !== NONE ? ext : (basic[next] ?? '\ufffd');
      }
    }
  }
  return out;
}

/** A set of tables that encodes a text, and the UDH elements that tell the handset so. */
export interface NationalShiftChoice {
  readonly tables: Gsm7Tables;
  /** IE 0x25 (locking) and/or 0x24 (single), TS 23.040 §9.2.3.24.15–16; empty for the default tables. */
  readonly elements: readonly UdhElement[];
  readonly septets: number;
}

/**
 * Picks the tables that make `text` encodable, trying only the given languages. The default
 * tables win when they suffice (no UDH cost); otherwise the choice with fewest UDH elements,
 * then fewest septets, then the lowest identifiers. Locking and single shift may come from
 * different languages (TS 23.040 §9.2.3.24.15–16 carry one identifier each).
 * Returns undefined when no combination encodes every character.
 */
export function chooseNationalShift(
  text: string,
  languages: readonly number[] = NATIONAL_LANGUAGES,
): NationalShiftChoice | undefined {
  const lockings = [0, ...LOCKING_LANGUAGES.filter((id) => languages.includes(id))];
  const singles = [0, ...SINGLE_LANGUAGES.filter((id) => languages.includes(id))];
  let best: (NationalShiftChoice & { readonly cost: number }) | undefined;
  for (const locking of lockings) {
    for (const single of singles) {
      const tables = { locking, single };
      const septets = gsm7Septets(text, tables);
      if (septets === undefined) continue;
      const cost = (locking === 0 ? 0 : 1) + (single === 0 ? 0 : 1);
      // Loops run in ascending identifiers, so a strict comparison keeps the lowest on a tie.
      if (!best || cost < best.cost || (cost === best.cost && septets < best.septets)) {
        best = { tables, elements: nationalShiftElements(tables), septets, cost };
      }
    }
  }
  if (!best) return undefined;
  return { tables: best.tables, elements: best.elements, septets: best.septets };
}
