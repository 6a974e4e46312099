import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SIGNATURE_HEADER, signatureHeader, verifySignature } from '../../../src/events/signature.js';

const SECRET = 'whsec_test_secret';
const T = 1_767_225_600; // 2026-01-01T00:00:00Z
const BODY = '{"event":"delivered","id":42,"text":"Grüße 👋"}';
/** `printf '%s' '1767225600.<BODY>' | openssl dgst -sha256 -hmac whsec_test_secret` */
const GOLDEN = '5f0c98904a0ce2ce9ba8ccace0b9c9fafe40d0b1d758e91a0e4084261a98ec94';

function hmacHex(secret: string, t: number, body: string): string {
  return createHmac('sha256', secret).update(Buffer.from(`${t}.${body}`, 'utf8')).digest('hex');
}

describe('signatureHeader', () => {
  it('is named x-smppd-signature', () => {
    expect(SIGNATURE_HEADER).toBe('x-smppd-signature');
  });

  it('is t=<seconds>,v1=<lowercase hex HMAC-SHA256 of "<t>.<body>"> over the UTF-8 bytes (golden, from openssl)', () => {
    expect(hmacHex(SECRET, T, BODY)).toBe(GOLDEN);
    expect(signatureHeader(SECRET, T, BODY)).toBe(`t=${T},v1=${GOLDEN}`);
  });

  it('matches an independent HMAC for any secret, time and body', () => {
    fc.assert(fc.property(fc.string(), fc.integer({ min: 0, max: 4_000_000_000 }), fc.string(), (secret, t, body) => {
      expect(signatureHeader(secret, t, body)).toBe(`t=${t},v1=${hmacHex(secret, t, body)}`);
    }));
  });

  it('refuses a timestamp that is not whole non-negative seconds', () => {
    expect(() => signatureHeader(SECRET, 1.5, BODY)).toThrow();
    expect(() => signatureHeader(SECRET, -1, BODY)).toThrow();
    expect(() => signatureHeader(SECRET, Number.NaN, BODY)).toThrow();
  });
});

describe('verifySignature', () => {
  const header = signatureHeader(SECRET, T, BODY);

  it('accepts its own header, at the signing time and up to the tolerance either side', () => {
    expect(verifySignature(SECRET, header, BODY, T)).toBe(true);
    expect(verifySignature(SECRET, header, BODY, T + 300)).toBe(true);
    expect(verifySignature(SECRET, header, BODY, T - 300)).toBe(true);
    expect(verifySignature(SECRET, header, BODY, T + 10, 10)).toBe(true);
  });

  it('rejects a changed body, even by one byte', () => {
    expect(verifySignature(SECRET, header, BODY.replace('42', '43'), T)).toBe(false);
    expect(verifySignature(SECRET, header, `${BODY} `, T)).toBe(false);
    expect(verifySignature(SECRET, header, BODY.normalize('NFD'), T)).toBe(false);
  });

  it('rejects a wrong secret', () => {
    expect(verifySignature('whsec_other', header, BODY, T)).toBe(false);
    expect(verifySignature('', header, BODY, T)).toBe(false);
  });

  it('rejects a stale or future timestamp (replay)', () => {
    expect(verifySignature(SECRET, header, BODY, T + 301)).toBe(false);
    expect(verifySignature(SECRET, header, BODY, T - 301)).toBe(false);
    expect(verifySignature(SECRET, header, BODY, T + 11, 10)).toBe(false);
  });

  it('rejects a header whose t was changed (the time is signed)', () => {
    expect(verifySignature(SECRET, header.replace(`t=${T}`, `t=${T + 1}`), BODY, T)).toBe(false);
  });

  it.each([
    '',
    'v1=',
    't=abc',
    't=',
    `t=${T}`,
    `v1=${GOLDEN}`,
    `t=abc,v1=${GOLDEN}`,
    `t=${T},v1=${GOLDEN.slice(0, 63)}`,
    `t=${T},v1=${GOLDEN}00`,
    `t=${T},v1=${GOLDEN.slice(0, 62)}zz`,
    `t=${T},t=${T},v1=${GOLDEN}`,
    `t=-${T},v1=${GOLDEN}`,
    `t=${T}.0,v1=${GOLDEN}`,
    'garbage',
    ',,,,',
    '=,=,=',
    '\u0000\uffff',
  ])('rejects the malformed header %j without throwing', (bad) => {
    expect(verifySignature(SECRET, bad, BODY, T)).toBe(false);
  });

  it('never throws on arbitrary text', () => {
    fc.assert(fc.property(fc.string(), (bad) => {
      expect(typeof verifySignature(SECRET, bad, BODY, T)).toBe('boolean');
    }));
  });

  it('accepts a header with several v1 entries when one of them matches (a secret being rolled)', () => {
    const other = hmacHex('whsec_old_secret', T, BODY);
    expect(verifySignature(SECRET, `t=${T},v1=${other},v1=${GOLDEN}`, BODY, T)).toBe(true);
    expect(verifySignature(SECRET, `t=${T},v1=${GOLDEN},v1=${other}`, BODY, T)).toBe(true);
    expect(verifySignature('whsec_old_secret', `t=${T},v1=${GOLDEN},v1=${other}`, BODY, T)).toBe(true);
    expect(verifySignature(SECRET, `t=${T},v1=${other},v1=${other}`, BODY, T)).toBe(false);
  });

  it('ignores other schemes and a malformed v1 next to a good one', () => {
    expect(verifySignature(SECRET, `t=${T},v0=abc,v1=nothex,v1=${GOLDEN}`, BODY, T)).toBe(true);
    expect(verifySignature(SECRET, `t=${T},v0=${GOLDEN}`, BODY, T)).toBe(false);
  });
});

describe('the README\'s recipe for receivers', () => {
  it('accepts what smppd signs and refuses a changed body, as verifySignature does', async () => {
    const { readFile } = await import('node:fs/promises');
    const { createHmac, timingSafeEqual } = await import('node:crypto');
    const readme = await readFile(new URL('../../../README.md', import.meta.url), 'utf8');
    const block = /```js\n([\s\S]*?function verified[\s\S]*?)```/.exec(readme)?.[1];
    expect(block, 'the README has the js recipe').toBeDefined();
    // The recipe as written, its import replaced by the same functions handed in.
    const body = block!.replace(/^import .*$/m, '');
    const verified = new Function('createHmac', 'timingSafeEqual', `${body}\nreturn verified;`)(createHmac, timingSafeEqual) as
      (secret: string, header: string, rawBody: string) => boolean;
    const payload = '{"type":"status","messageId":"m1","status":"DELIVERED"}';
    const header = signatureHeader('whsec-0123456789abcdef', Math.floor(Date.now() / 1000), payload);
    expect(verified('whsec-0123456789abcdef', header, payload)).toBe(true);
    expect(verified('whsec-0123456789abcdef', header, payload.replace('DELIVERED', 'FAILED'))).toBe(false);
    expect(verified('another-secret-0123456', header, payload)).toBe(false);
  });
});
