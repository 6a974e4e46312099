/**
 * UCS-2 as SMPP data_coding 8 carries it (SMPP v3.4 §5.2.19; TS 23.038 §6.2.3): big-endian
 * 16-bit code units. Characters outside the BMP travel as UTF-16 surrogate pairs, which
 * handsets and SMSCs accept in practice, so this is UTF-16BE and an emoji counts two units.
 */

/** Octets per code unit. */
export const UCS2_UNIT_OCTETS = 2;

/** UTF-16BE bytes of `text`; a lone surrogate is written as it is, so decoding gives it back. */
export function encodeUcs2(text: string): Buffer {
  const out = Buffer.alloc(text.length * UCS2_UNIT_OCTETS);
  for (let i = 0; i < text.length; i++) out.writeUInt16BE(text.charCodeAt(i), i * UCS2_UNIT_OCTETS);
  return out;
}

/**
 * Decodes UTF-16BE. Surrogates are kept as code units, so the halves of a pair that arrived
 * in two parts join again when the decoded strings are concatenated. A dangling odd octet
 * gives U+FFFD.
 */
export function decodeUcs2(bytes: Uint8Array): string {
  const units = Math.floor(bytes.length / UCS2_UNIT_OCTETS);
  const codes: number[] = new Array<number>(units);
  for (let i = 0; i < units; i++) {
    codes[i] = ((bytes[2 * i] ?? 0) << 8) | (bytes[2 * i + 1] ?? 0);
  }
  let out = '';
  // In slices, so a long message_payload does not overflow the argument list.
  for (let i = 0; i < codes.length; i += 4096) out += String.fromCharCode(...codes.slice(i, i + 4096));
  return bytes.length % UCS2_UNIT_OCTETS === 0 ? out : out + '\ufffd';
}

/** UTF-16 code units of `text`: what the UNICODE limits (70 / 67) count. */
export function ucs2Units(text: string): number {
  return text.length;
}

/**
 * The index of the first UTF-16 surrogate in `text` that is not half of a pair, or -1. Such a
 * unit is no character: JSON lets a client write one (`"\ud800"`), UCS-2 would carry it as
 * D800 and the handset shows garbage.
 */
export function unpairedSurrogateAt(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
    }
    return i;
  }
  return -1;
}
