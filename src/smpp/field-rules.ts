/**
 * The rules a field of a PDU we send is checked against before a byte is written (wire.ts applies
 * them): a C-Octet String (SMPP v3.4 §3.1) has no NUL and no character past U+00FF, fits its
 * size with the NUL, and a time is empty or of the form YYMMDDhhmmsstnnp (§7.1.1); a
 * short_message is at most 254 octets (§4.4.1). Each refusal is PDU_FIELD_INVALID naming the
 * field, never its value, and telling nothing of a password.
 */
import { ErrorCode, SmppdError } from '../core/errors.js';

/** SMPP v3.4 §7.1: an absolute or relative time is 16 characters (17 octets with the NUL), or the field is empty. */
export const TIME_LENGTH = 16;
/** SMPP v3.4 §4.4.1, §4.6.1: short_message is 0–254 octets (sm_length is one octet, and 255 is not allowed). */
const MAX_SHORT_MESSAGE = 254;

/** A C-Octet String field's rule: its SMPP name (for messages), its size with the NUL, whether it is a time. */
export interface COctetRule {
  snake: string;
  maxOctets: number;
  time: boolean;
}

/**
 * The octets `value` takes as the C-Octet String `rule`, NUL included; throws PDU_FIELD_INVALID
 * when it breaks the rule.
 */
export function checkedCOctetSize(command: string, rule: COctetRule, value: unknown): number {
  if (typeof value !== 'string') throw fieldInvalid(command, rule.snake, 'type', 'is not a string');
  const n = value.length;
  // Where a message would tell the operator where or how long, a password's tells nothing of the secret.
  const secret = rule.snake === 'password';
  if (rule.time ? n !== 0 && n !== TIME_LENGTH : n >= rule.maxOctets) {
    throw fieldInvalid(command, rule.snake, 'length', rule.time
      ? `is ${n} characters; an SMPP time is ${TIME_LENGTH} characters or empty (SMPP v3.4 §7.1)`
      : `is ${secret ? 'too long' : `${n} characters`}; at most ${rule.maxOctets - 1} fit its ${rule.maxOctets} octets with the NUL (SMPP v3.4 §4)`);
  }
  for (let i = 0; i < n; i++) {
    const c = value.charCodeAt(i);
    if (c !== 0 && c <= 0xff) continue;
    const at = secret ? '' : ` at character ${i + 1}`;
    if (c === 0) throw fieldInvalid(command, rule.snake, 'nul', `holds a NUL${at}, which would end the C-Octet String there (SMPP v3.4 §3.1)`);
    // The code helps the operator find the character.
    const shown = secret ? '' : ` (U+${c.toString(16).toUpperCase().padStart(4, '0')})`;
    throw fieldInvalid(command, rule.snake, 'octet', `holds a character past U+00FF${at}${shown}; a C-Octet String carries one octet per character`);
  }
  if (rule.time && n === TIME_LENGTH) {
    const problem = smppTimeProblem(value);
    if (problem !== undefined) throw fieldInvalid(command, rule.snake, 'format', `is not an SMPP time YYMMDDhhmmsstnnp: ${problem} (SMPP v3.4 §7.1.1)`);
  }
  return n + 1;
}

const DIGIT_0 = 0x30;

/**
 * What breaks SMPP v3.4 §7.1.1 in a 16-character time, or undefined. Absolute ('+' or '-'): MM
 * 01–12, DD 01–31, hh 00–23, mm and ss 00–59, t 0–9, nn 00–48 quarter hours from UTC. Relative
 * ('R', §7.1.1.2): a period in years, months, days, hours, minutes and seconds, its t and nn
 * '0' and '00' (the SMSC ignores them; we write them as the spec says).
 */
function smppTimeProblem(value: string): string | undefined {
  // Two digits at `at` as a number; -1 when either is not a digit.
  const two = (at: number): number => {
    const hi = value.charCodeAt(at) - DIGIT_0;
    const lo = value.charCodeAt(at + 1) - DIGIT_0;
    return hi >= 0 && hi <= 9 && lo >= 0 && lo <= 9 ? hi * 10 + lo : -1;
  };
  const p = value[15];
  if (p !== '+' && p !== '-' && p !== 'R') return "its last character p is not '+', '-' or 'R'";
  const t = value.charCodeAt(12) - DIGIT_0;
  const yy = two(0), mo = two(2), dd = two(4), hh = two(6), mi = two(8), ss = two(10), nn = two(13);
  if (yy < 0 || mo < 0 || dd < 0 || hh < 0 || mi < 0 || ss < 0 || nn < 0 || t < 0 || t > 9) return 'its first 15 characters are not all digits';
  if (p === 'R') return t === 0 && nn === 0 ? undefined : "a relative time ('R') has t 0 and nn 00";
  if (mo < 1 || mo > 12) return 'its month MM is not 01–12';
  if (dd < 1 || dd > 31) return 'its day DD is not 01–31';
  if (hh > 23 || mi > 59 || ss > 59) return 'its hhmmss is not a time of day';
  if (nn > 48) return 'its offset nn is more than 48 quarter hours';
  return undefined;
}

/** Throws PDU_FIELD_INVALID when short_message (`snake`) holds more than MAX_SHORT_MESSAGE octets. */
export function checkShortMessageOctets(command: string, snake: string, octets: number): void {
  if (octets > MAX_SHORT_MESSAGE) {
    throw fieldInvalid(command, snake, 'length', `is ${octets} octets; at most ${MAX_SHORT_MESSAGE} (sm_length, SMPP v3.4 §4.4.1); longer text goes in parts or message_payload`);
  }
}

/** PDU_FIELD_INVALID naming the field, never its value (a password is one). */
function fieldInvalid(command: string, snake: string, problem: 'type' | 'length' | 'nul' | 'octet' | 'format', why: string): SmppdError {
  return new SmppdError(ErrorCode.PDU_FIELD_INVALID, `cannot encode ${command}: ${snake} ${why}`, { command, field: snake, problem });
}
