/**
 * The building blocks of the configuration's schema: each carries the one message an operator
 * sees (`must be a whole number from 1 to 64`). Messages never quote the value: it may be a secret.
 */
import { z } from 'zod';

export function typeMessage(expected: string) {
  return (issue: { input?: unknown }): string => {
    if (issue.input === undefined || issue.input === null) return 'is required';
    if (expected === 'a string' && (typeof issue.input === 'number' || typeof issue.input === 'boolean')) {
      return 'must be a string: put it in quotes';
    }
    return `must be ${expected}`;
  };
}

/** A string of at most `max` characters (`why` names the limit's origin). */
export function text(max: number, why = '') {
  return z.string({ error: typeMessage('a string') }).max(max, { error: `must be at most ${max} characters${why}` });
}

/**
 * A value smppd sends in a C-Octet String (SMPP v3.4 §3.1: system_id, password, system_type,
 * address_range): at most `max` characters (the field's size less its NUL), each printable
 * ASCII or Latin-1 (U+0020–U+007E, U+00A0–U+00FF), one octet each on the wire. A NUL would end
 * the field early, a character past U+00FF has no octet, a control character no SMSC expects.
 * The message names the position, never the character: the value may be a password.
 */
export function cOctets(max: number, why = '') {
  return text(max, why).superRefine((s, ctx) => {
    const at = unprintableOctetAt(s);
    if (at >= 0) ctx.addIssue({ code: 'custom', message: `must hold only printable ASCII or Latin-1 characters (SMPP v3.4 C-Octet String); character ${at + 1} is not` });
  });
}

/** The index of the first character of `s` that `cOctets` refuses, or -1. */
export function unprintableOctetAt(s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c < 0x20 || c > 0x7e) && (c < 0xa0 || c > 0xff)) return i;
  }
  return -1;
}

export function nonEmpty() {
  return z.string({ error: typeMessage('a string') }).min(1, { error: 'must not be empty' });
}

export function wholeNumber(min: number, max: number) {
  const error = `must be a whole number from ${min} to ${max}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
}

export function atLeastZero() {
  return z.number({ error: 'must be a number ≥ 0' }).min(0, { error: 'must be a number ≥ 0' });
}

export function positive(unit = '') {
  const error = `must be a number${unit} > 0`;
  return z.number({ error }).positive({ error });
}

/** A number from `min` to `max`, fractions allowed. */
export function between(min: number, max: number) {
  const error = `must be a number from ${min} to ${max}`;
  return z.number({ error }).min(min, { error }).max(max, { error });
}

export const seconds = () => positive(' of seconds');

/** Seconds from `min` to `max`, fractions allowed. */
export function secondsFrom(min: number, max: number) {
  const error = `must be a number of seconds from ${min} to ${max}`;
  return z.number({ error }).min(min, { error }).max(max, { error });
}

export function oneOf<T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: `must be one of ${values.join(', ')}` });
}

export const flag = () => z.boolean({ error: 'must be true or false' });

// --- sections ---

/** Exponential backoff bounds, in seconds. Invariant: maxSeconds ≥ initialSeconds. */
export function backoff(initialSeconds: number, maxSeconds: number) {
  return z.strictObject({
    initialSeconds: seconds().default(initialSeconds),
    maxSeconds: seconds().default(maxSeconds),
  }, { error: 'must be a mapping { initialSeconds, maxSeconds }' }).default({ initialSeconds, maxSeconds })
    .refine((b) => b.maxSeconds >= b.initialSeconds, { error: 'must be ≥ initialSeconds', path: ['maxSeconds'] });
}
