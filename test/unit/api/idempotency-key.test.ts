import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/api/errors.js';
import { canonicalJson, idempotencyKeyOf, RequestFingerprint } from '../../../src/api/idempotency-key.js';

const refusal = (value: string | string[]): string => {
  try {
    idempotencyKeyOf(value);
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).code).toBe('VALIDATION');
    return (e as ApiError).message;
  }
  throw new Error(`${JSON.stringify(value)} was taken`);
};

describe('idempotencyKeyOf (the Idempotency-Key header)', () => {
  it('takes 1–255 printable ASCII characters, bare or as a Structured Field String', () => {
    expect(idempotencyKeyOf(undefined)).toBeUndefined();
    expect(idempotencyKeyOf('8e03978e-40d5-43e8-bc93-6894a57f9324')).toBe('8e03978e-40d5-43e8-bc93-6894a57f9324');
    expect(idempotencyKeyOf('"8e03978e-40d5-43e8-bc93-6894a57f9324"')).toBe('8e03978e-40d5-43e8-bc93-6894a57f9324');
    expect(idempotencyKeyOf('"say \\"hi\\" \\\\ bye"')).toBe('say "hi" \\ bye');
    expect(idempotencyKeyOf('a')).toBe('a');
    expect(idempotencyKeyOf('~'.repeat(255))).toBe('~'.repeat(255));
    expect(idempotencyKeyOf('"')).toBe('"');
    expect(idempotencyKeyOf('a "b" c')).toBe('a "b" c');
  });

  it('refuses an empty, too long, non-ASCII or badly quoted key, naming the header and the rule', () => {
    expect(refusal('')).toMatch(/^Idempotency-Key: is empty; a key is 1–255 printable ASCII characters/);
    expect(refusal('""')).toContain('is empty');
    expect(refusal('x'.repeat(256))).toContain('is 256 characters long');
    expect(refusal(`"${'x'.repeat(256)}"`)).toContain('is 256 characters long');
    expect(refusal('caf\u00e9')).toContain('outside printable ASCII');
    expect(refusal('line\u0000')).toContain('outside printable ASCII');
    expect(refusal('"a"b"')).toContain('unescaped double quote');
    expect(refusal('"a\\nb"')).toContain('backslash');
    expect(refusal(['a', 'b'])).toContain('more than once');
  });
});

describe('the request fingerprint', () => {
  it('is the same for JSON that differs only in key order and layout, at any depth', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[2,{"y":2,"z":1}]},"b":1}');
    const f = (body: unknown) => new RequestFingerprint('POST /x').json(body).digest();
    expect(f(JSON.parse('{ "a": 1,\n "b": "two" }'))).toBe(f({ b: 'two', a: 1 }));
    expect(f({ a: 1 })).not.toBe(f({ a: 2 }));
    expect(f({ a: 1 })).not.toBe(new RequestFingerprint('POST /y').json({ a: 1 }).digest());
    expect(canonicalJson(undefined)).toBe('null');
  });

  it('hashes bytes as they arrive: the same bytes in other chunks are the same', () => {
    const whole = new RequestFingerprint('file').bytes(Buffer.from('4477\n4478\n')).digest();
    expect(new RequestFingerprint('file').bytes(Buffer.from('447')).bytes('7\n44').bytes(Buffer.from('78\n')).digest()).toBe(whole);
  });
});
