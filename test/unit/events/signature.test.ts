import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signatureHeader, verifySignature } from '../../../src/events/signature.js';

const SECRET = 'whsec_test_secret';
const T = 1_767_225_600; // 2026-01-01T00:00:00Z
const ID = '42';
const BODY = '{"event":"delivered","id":42,"text":"Grüße 👋"}';
/** `printf '%s' '1767225600.42.<BODY>' | openssl dgst -sha256 -hmac whsec_test_secret` */
const GOLDEN = 'fb1f862e591369a689e227a44a777b06d959ec774c82a989356b64cb2be058e5';
/** The signature of before, over "<t>.<body>" only: `printf '%s' '1767225600.<BODY>' | openssl dgst -sha256 -hmac whsec_test_secret` */
const GOLDEN_WITHOUT_ID = '5f0c98904a0ce2ce9ba8ccace0b9c9fafe40d0b1d758e91a0e4084261a98ec94';

function hmacHex(secret: string, t: number, id: string, body: string): string {
  return createHmac('sha256', secret).update(Buffer.from(`${t}.${id}.${body}`, 'utf8')).digest('hex');
}

describe('signatureHeader', () => {
  it('is named x-smppd-signature and covers the id of x-smppd-event-id', () => {
    expect(SIGNATURE_HEADER).toBe('x-smppd-signature');
    expect(EVENT_ID_HEADER).toBe('x-smppd-event-id');
  });

  it('is t=<seconds>,v2=<lowercase hex HMAC-SHA256 of "<t>.<eventId>.<body>"> over the UTF-8 bytes (golden, from openssl)', () => {
    expect(hmacHex(SECRET, T, ID, BODY)).toBe(GOLDEN);
    expect(signatureHeader(SECRET, T, 42, BODY)).toBe(`t=${T},v2=${GOLDEN}`);
    expect(signatureHeader(SECRET, T, ID, BODY)).toBe(`t=${T},v2=${GOLDEN}`);
  });

  it('matches an independent HMAC for any secret, time, event id and body', () => {
    fc.assert(fc.property(fc.string(), fc.integer({ min: 0, max: 4_000_000_000 }), fc.nat(), fc.string(), (secret, t, id, body) => {
      expect(signatureHeader(secret, t, id, body)).toBe(`t=${t},v2=${hmacHex(secret, t, String(id), body)}`);
    }), { seed: 0x5161 });
  });

  it('refuses a timestamp that is not whole non-negative seconds, and an event id that is not a non-negative integer', () => {
    expect(() => signatureHeader(SECRET, 1.5, ID, BODY)).toThrow();
    expect(() => signatureHeader(SECRET, -1, ID, BODY)).toThrow();
    expect(() => signatureHeader(SECRET, Number.NaN, ID, BODY)).toThrow();
    for (const id of [-1, 1.5, '', '4.2', '42 ', 'x']) expect(() => signatureHeader(SECRET, T, id, BODY)).toThrow();
  });
});

describe('verifySignature', () => {
  const header = signatureHeader(SECRET, T, ID, BODY);

  it('accepts its own header, at the signing time and up to the tolerance either side', () => {
    expect(verifySignature(SECRET, header, ID, BODY, T)).toBe(true);
    expect(verifySignature(SECRET, header, ID, BODY, T + 300)).toBe(true);
    expect(verifySignature(SECRET, header, ID, BODY, T - 300)).toBe(true);
    expect(verifySignature(SECRET, header, ID, BODY, T + 10, 10)).toBe(true);
  });

  it('rejects a changed body, even by one byte', () => {
    expect(verifySignature(SECRET, header, ID, BODY.replace('42', '43'), T)).toBe(false);
    expect(verifySignature(SECRET, header, ID, `${BODY} `, T)).toBe(false);
    expect(verifySignature(SECRET, header, ID, BODY.normalize('NFD'), T)).toBe(false);
  });

  it('rejects a wrong secret', () => {
    expect(verifySignature('whsec_other', header, ID, BODY, T)).toBe(false);
    expect(verifySignature('', header, ID, BODY, T)).toBe(false);
  });

  it('rejects a stale or future timestamp (replay)', () => {
    expect(verifySignature(SECRET, header, ID, BODY, T + 301)).toBe(false);
    expect(verifySignature(SECRET, header, ID, BODY, T - 301)).toBe(false);
    expect(verifySignature(SECRET, header, ID, BODY, T + 11, 10)).toBe(false);
  });

  it('rejects a captured request replayed under another event id (the id is signed)', () => {
    expect(verifySignature(SECRET, header, '43', BODY, T)).toBe(false);
    expect(verifySignature(SECRET, header, '420', BODY, T)).toBe(false);
    expect(verifySignature(SECRET, header, '042', BODY, T)).toBe(false);
    // A body crafted to shift the separator still does not match: "<t>.4.2<body>" is not "<t>.42.<body>".
    expect(verifySignature(SECRET, header, '4', `2.${BODY}`, T)).toBe(false);
  });

  it('rejects a malformed event id without throwing', () => {
    for (const id of ['', '4.2', ' 42', 'x', '-1', '1'.repeat(21)]) expect(verifySignature(SECRET, header, id, BODY, T)).toBe(false);
    expect(verifySignature(SECRET, header, undefined as unknown as string, BODY, T)).toBe(false);
  });

  it('no longer accepts the signature of before, over the time and body alone (v1)', () => {
    expect(verifySignature(SECRET, `t=${T},v1=${GOLDEN_WITHOUT_ID}`, ID, BODY, T)).toBe(false);
    expect(verifySignature(SECRET, `t=${T},v2=${GOLDEN_WITHOUT_ID}`, ID, BODY, T)).toBe(false);
  });

  it('rejects a header whose t was changed (the time is signed)', () => {
    expect(verifySignature(SECRET, header.replace(`t=${T}`, `t=${T + 1}`), ID, BODY, T)).toBe(false);
  });

  it.each([
    '',
    'v1=',
    't=abc',
    't=',
    `t=${T}`,
    `v2=${GOLDEN}`,
    `t=abc,v2=${GOLDEN}`,
    `t=${T},v2=${GOLDEN.slice(0, 63)}`,
    `t=${T},v2=${GOLDEN}00`,
    `t=${T},v2=${GOLDEN.slice(0, 62)}zz`,
    `t=${T},t=${T},v2=${GOLDEN}`,
    `t=-${T},v2=${GOLDEN}`,
    `t=${T}.0,v2=${GOLDEN}`,
    `t=${T},v1=${GOLDEN}`,
    'garbage',
    ',,,,',
    '=,=,=',
    '\u0000\uffff',
  ])('rejects the malformed header %j without throwing', (bad) => {
    expect(verifySignature(SECRET, bad, ID, BODY, T)).toBe(false);
  });

  it('never throws on arbitrary text', () => {
    fc.assert(fc.property(fc.string(), (bad) => {
      expect(typeof verifySignature(SECRET, bad, ID, BODY, T)).toBe('boolean');
      expect(verifySignature(SECRET, header, bad, BODY, T)).toBe(bad === ID);
    }), { seed: 0x5162 });
  });

  it('accepts a header with several v2 entries when one of them matches (a secret being rolled)', () => {
    const other = hmacHex('whsec_old_secret', T, ID, BODY);
    expect(verifySignature(SECRET, `t=${T},v2=${other},v2=${GOLDEN}`, ID, BODY, T)).toBe(true);
    expect(verifySignature(SECRET, `t=${T},v2=${GOLDEN},v2=${other}`, ID, BODY, T)).toBe(true);
    expect(verifySignature('whsec_old_secret', `t=${T},v2=${GOLDEN},v2=${other}`, ID, BODY, T)).toBe(true);
    expect(verifySignature(SECRET, `t=${T},v2=${other},v2=${other}`, ID, BODY, T)).toBe(false);
  });

  it('ignores other schemes and a malformed v2 next to a good one', () => {
    expect(verifySignature(SECRET, `t=${T},v0=abc,v1=${GOLDEN},v2=nothex,v2=${GOLDEN}`, ID, BODY, T)).toBe(true);
    expect(verifySignature(SECRET, `t=${T},v0=${GOLDEN}`, ID, BODY, T)).toBe(false);
  });
});

describe('the receivers\' recipe in docs/api.md', () => {
  it('accepts what smppd signs and refuses a changed body or another event id, as verifySignature does', async () => {
    const { readFile } = await import('node:fs/promises');
    const { createHmac, timingSafeEqual } = await import('node:crypto');
    const doc = await readFile(new URL('../../../docs/api.md', import.meta.url), 'utf8');
    const block = /```js\n([\s\S]*?function verified[\s\S]*?)```/.exec(doc)?.[1];
    expect(block, 'docs/api.md has the js recipe').toBeDefined();
    // The recipe as written, its import replaced by the same functions handed in.
    const body = block!.replace(/^import .*$/m, '');
    const verified = new Function('createHmac', 'timingSafeEqual', `${body}\nreturn verified;`)(createHmac, timingSafeEqual) as
      (secret: string, header: string, eventId: string, rawBody: string) => boolean;
    const payload = '{"type":"status","messageId":"m1","status":"DELIVERED"}';
    const header = signatureHeader('whsec-0123456789abcdef', Math.floor(Date.now() / 1000), 17, payload);
    expect(verified('whsec-0123456789abcdef', header, '17', payload)).toBe(true);
    expect(verified('whsec-0123456789abcdef', header, '18', payload)).toBe(false);
    expect(verified('whsec-0123456789abcdef', header, '17', payload.replace('DELIVERED', 'FAILED'))).toBe(false);
    expect(verified('another-secret-0123456', header, '17', payload)).toBe(false);
    expect(verified('whsec-0123456789abcdef', header.replace(/v2=[0-9a-f]+/, 'v2=zz'), '17', payload)).toBe(false);
  });
});
