/**
 * The provider's phone number rule (messaging-service-api.md §4.1): digits with the country code
 * only, as E.164 without the '+'. `447700900123` is valid; `+44 7700 900123`, `0044…` and a
 * national number with a leading 0 are not. One rule for sendSms, a queue message and every
 * line of a sendbulk file (ingress/http/number-file.ts).
 */

/** E.164: at most 15 digits; the shortest numbers in use (country code and subscriber) have 7. */
const MIN_DIGITS = 7;
const MAX_DIGITS = 15;

/** Why a number is refused: the keys of sendbulk's `bulkListInfo.errors`. */
export const NUMBER_PROBLEMS = {
  empty: 'is empty',
  plusPrefix: "must not start with '+': give the country code and number as digits only, e.g. 447700900123",
  spaces: 'must not contain spaces: digits only, e.g. 447700900123',
  notDigits: 'must be digits only (country code and number), e.g. 447700900123',
  doubleZeroPrefix: "must not start with '00': give the country code without it, e.g. 447700900123",
  leadingZero: 'must not start with 0: a national number needs its country code instead, e.g. 447700900123',
  tooShort: `must be at least ${MIN_DIGITS} digits with the country code`,
  tooLong: `must be at most ${MAX_DIGITS} digits (E.164)`,
} as const;
export type NumberProblem = keyof typeof NUMBER_PROBLEMS;

/** The rule of `checkNumber` as one JSON Schema pattern, for /openapi.json (a test holds them together). */
export const NUMBER_PATTERN = `^[1-9][0-9]{${MIN_DIGITS - 1},${MAX_DIGITS - 1}}$`;

const DIGITS = /^\d+$/;
const SPACE = /\s/;

/** null when `n` is a valid destination number, else the first rule it breaks. */
export function checkNumber(n: string): NumberProblem | null {
  if (n === '') return 'empty';
  if (n.startsWith('+')) return 'plusPrefix';
  if (SPACE.test(n)) return 'spaces';
  if (!DIGITS.test(n)) return 'notDigits';
  if (n.startsWith('00')) return 'doubleZeroPrefix';
  if (n.startsWith('0')) return 'leadingZero';
  if (n.length < MIN_DIGITS) return 'tooShort';
  if (n.length > MAX_DIGITS) return 'tooLong';
  return null;
}
