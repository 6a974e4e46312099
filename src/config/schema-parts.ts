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

export const seconds = () => positive(' of seconds');

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
