/**
 * The provider's POST /sms/identify (messaging-service-api.md §2.5, §8): which encoding a
 * text needs and how many parts it makes. One character outside GSM 03.38 (a curly quote,
 * an em dash, the ellipsis character, any emoji) makes the whole message UNICODE.
 */
import { gsm7Septets } from './gsm7.js';
import { encodeMessage, segmentLimits, splitText, type EncodeOptions, type Encoding, type LongMessageMode } from './segment.js';

export interface IdentifyResult {
  /** The text, echoed. */
  readonly message: string;
  readonly messageType: Encoding;
  /** Parts the text makes; the provider's smsParts. At least 1 (empty text is one part). */
  readonly smscount: number;
  /** GSM-7: septets (an extension character counts 2); UNICODE: UTF-16 code units (an emoji counts 2). */
  readonly charCount: number;
  /** Characters per part: 160 or 153 (GSM-7), 70 or 67 (UNICODE). */
  readonly charLimit: number;
}

/**
 * Identifies `text` as the provider does, with the default GSM tables and 8-bit UDH limits.
 * smscount comes from splitting the text exactly as `encodeMessage` does, so a part never
 * splits an escape sequence or a surrogate pair and the count always matches what is sent.
 */
export function identify(text: string): IdentifyResult {
  const septets = gsm7Septets(text);
  const messageType: Encoding = septets === undefined ? 'UNICODE' : 'GSM-7';
  const charCount = septets ?? text.length;
  const limits = segmentLimits(messageType);
  const smscount = splitText(text, messageType, limits).length;
  return {
    message: text,
    messageType,
    smscount,
    charCount,
    charLimit: smscount === 1 ? limits.single : limits.perPart,
  };
}

/** An upstream's rules for composing text (`upstreams[]`: defaultAlphabet, shift tables, longMessages, udhReference, maxParts). */
export interface IdentifyRules {
  readonly defaultAlphabet: EncodeOptions['defaultAlphabet'];
  readonly nationalShift: boolean;
  readonly longMessages: LongMessageMode;
  readonly udhReferenceBits: 8 | 16;
}

/**
 * Identifies `text` as it would be sent through an upstream with `rules`: the encoding and the
 * number of parts come from the encoder itself (shift tables that keep a text GSM-7, SAR or
 * message_payload instead of UDH), so smscount is what the SMSC will be sent. A text the
 * upstream cannot carry at all is identified with the default rules.
 */
export function identifyFor(text: string, rules: IdentifyRules): IdentifyResult {
  const encoded = encodeMessage(text, {
    messageType: 'AUTO', defaultAlphabet: rules.defaultAlphabet, nationalShift: rules.nationalShift,
    longMessages: rules.longMessages, udhReferenceBits: rules.udhReferenceBits, maxParts: 255, reference: 0,
  });
  if (!encoded.ok) return identify(text);
  const messageType = encoded.encoding;
  const charCount = messageType === 'GSM-7' ? (gsm7Septets(text) ?? text.length) : text.length;
  const smscount = encoded.parts.length;
  // SAR and message_payload carry no UDH: every part holds what a single message does.
  const limits = rules.longMessages === 'udh' ? segmentLimits(messageType, rules.udhReferenceBits) : segmentLimits(messageType);
  return {
    message: text,
    messageType,
    smscount,
    charCount,
    charLimit: smscount === 1 || rules.longMessages !== 'udh' ? limits.single : limits.perPart,
  };
}
