/**
 * Sender IDs (the `source_addr` of a submit_sm) as SMPP and mobile networks carry them. One rule
 * for every place a sender ID enters smppd: the HTTP and queue ingress, `clients[].senders` in
 * the configuration, and the composer that turns it into `source_addr` and its TON/NPI.
 *
 * - numeric, digits only:
 *   - `shortCode`: 3–8 digits (a network's own numbering, SMPP TON 3 by default);
 *   - `international`: 9–15 digits, the country code first (ITU-T E.164 §6: at most 15 digits;
 *     no country code starts with 0, so a leading 0 is a national number, which is refused).
 * - `alphanumeric`: 1–11 characters (3GPP TS 23.040 §9.1.2.5: TP-OA holds 10 octets, 11 packed
 *   septets), at least one letter (a sender of digits and signs only reads as a number and most
 *   networks refuse it), no space first or last, each character from `ALPHANUMERIC_CHARACTERS`.
 *
 * `ALPHANUMERIC_CHARACTERS` is the printable part of the GSM 03.38 basic table (3GPP TS 23.038
 * §6.2.1) that is also ASCII: SMPP v3.4 §3.1 makes `source_addr` a C-Octet String of ASCII
 * characters, and SMSCs translate it to GSM 7-bit for the handset. A GSM character outside
 * ASCII (£, é, Ä …) has no agreed octet in a C-Octet String (Latin-1 0xE9 is not GSM 0x05), and
 * the GSM extension table (€ [ ] { } …) needs an escape that TP-OA cannot carry. So:
 * A–Z a–z 0–9, space and ! " # $ % & ' ( ) * + , - . / : ; < = > ? @ _
 *
 * Pure: no I/O, no time.
 */

export type SenderKind = 'alphanumeric' | 'international' | 'shortCode';

/** SMPP v3.4 §5.2.5–6: a type of number and a numbering plan, each 0–255. */
export interface TonNpi {
  readonly ton: number;
  readonly npi: number;
}

/** The source_addr_ton/npi of each kind of sender ID, per upstream. */
export type SourceAddressing = Readonly<Record<SenderKind, TonNpi>>;

/**
 * TON/NPI of each kind as most SMSCs expect them (SMPP v3.4 §5.2.5–6): alphanumeric 5/0; a
 * number with its country code, international E.164 1/1; a short code, network specific 3/0
 * (some SMSCs want 0/0 or 0/1 there: `upstreams[].sourceAddress.shortCode`).
 */
export const DEFAULT_SOURCE_ADDRESSING: SourceAddressing = {
  alphanumeric: { ton: 5, npi: 0 },
  international: { ton: 1, npi: 1 },
  shortCode: { ton: 3, npi: 0 },
};

/** 3GPP TS 23.040 §9.1.2.5: 11 GSM 7-bit characters fill TP-OA's 10 octets. */
export const ALPHANUMERIC_MAX = 11;
/** ITU-T E.164 §6: an international number has at most 15 digits. */
export const INTERNATIONAL_MAX_DIGITS = 15;
/** Numbers of more digits than this are international numbers; of this many or fewer, short codes. */
const SHORT_CODE_MAX_DIGITS = 8;
const SHORT_CODE_MIN_DIGITS = 3;

/** The characters an alphanumeric sender ID may hold, in the order of the ASCII table. */
export const ALPHANUMERIC_CHARACTERS = ' !"#$%&\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';

/** Allowed characters by char code (ASCII only, so 128 entries). */
const ALLOWED = new Uint8Array(128);
for (let i = 0; i < ALPHANUMERIC_CHARACTERS.length; i++) ALLOWED[ALPHANUMERIC_CHARACTERS.charCodeAt(i)] = 1;

export const SENDER_ID_RULE = `a short code of ${SHORT_CODE_MIN_DIGITS}–${SHORT_CODE_MAX_DIGITS} digits, a number with its country code `
  + `(${SHORT_CODE_MAX_DIGITS + 1}–${INTERNATIONAL_MAX_DIGITS} digits, no + or leading 0), or ${ALPHANUMERIC_MAX} at most of `
  + 'A–Z a–z 0–9, space and ! " # $ % & \' ( ) * + , - . / : ; < = > ? @ _ with at least one letter';

export type SenderCheck = { ok: true; kind: SenderKind } | { ok: false; problem: string };

/** The kind of `senderId`, or why no network would carry it (a sentence for `senderId: …`). */
export function checkSenderId(senderId: string): SenderCheck {
  const n = senderId.length;
  if (n === 0) return { ok: false, problem: 'must not be empty' };
  let digits = 0;
  let letters = 0;
  for (let i = 0; i < n; i++) {
    const c = senderId.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) digits++;
    else if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) letters++;
    else if (c >= 128 || ALLOWED[c] !== 1) {
      return { ok: false, problem: `must not hold ${describeCharacter(senderId, i)}; a sender ID is ${SENDER_ID_RULE}` };
    }
  }
  if (digits === n) {
    if (n < SHORT_CODE_MIN_DIGITS) return { ok: false, problem: `is ${n} digit${n === 1 ? '' : 's'}; a numeric sender ID is ${numericRule()}` };
    if (n <= SHORT_CODE_MAX_DIGITS) return { ok: true, kind: 'shortCode' };
    if (n > INTERNATIONAL_MAX_DIGITS) return { ok: false, problem: `is ${n} digits; a numeric sender ID is ${numericRule()}` };
    if (senderId.charCodeAt(0) === 0x30) return { ok: false, problem: `starts with 0; a numeric sender ID is ${numericRule()}, country code first` };
    return { ok: true, kind: 'international' };
  }
  if (n > ALPHANUMERIC_MAX) return { ok: false, problem: `is ${n} characters; an alphanumeric sender ID is at most ${ALPHANUMERIC_MAX} (GSM 03.40 TP-OA)` };
  if (letters === 0) {
    return { ok: false, problem: `has no letter; an alphanumeric sender ID needs one, and a number is digits only (no +, 00, spaces or dashes): ${numericRule()}` };
  }
  if (senderId.charCodeAt(0) === 0x20 || senderId.charCodeAt(n - 1) === 0x20) return { ok: false, problem: 'must not start or end with a space' };
  return { ok: true, kind: 'alphanumeric' };
}

function numericRule(): string {
  return `a short code of ${SHORT_CODE_MIN_DIGITS}–${SHORT_CODE_MAX_DIGITS} digits or a number with its country code of `
    + `${SHORT_CODE_MAX_DIGITS + 1}–${INTERNATIONAL_MAX_DIGITS} digits (E.164)`;
}

/** The character at `i` for a message: printable ASCII quoted, anything else as U+XXXX (a NUL must not reach a log as itself). */
export function describeCharacter(text: string, i: number): string {
  const cp = text.codePointAt(i) ?? 0;
  const code = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
  return cp > 0x20 && cp < 0x7f ? `"${String.fromCodePoint(cp)}" (${code})` : code;
}
