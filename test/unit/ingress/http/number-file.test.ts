import { describe, expect, it } from 'vitest';
import { checkNumber } from '../../../../src/api/numbers.js';
import { NumberTally, readLines } from '../../../../src/ingress/http/number-file.js';

async function lines(chunks: Array<string | Buffer>): Promise<string[]> {
  async function* source() {
    for (const c of chunks) yield Buffer.isBuffer(c) ? c : Buffer.from(c);
  }
  const out: string[] = [];
  for await (const l of readLines(source())) out.push(l);
  return out;
}

describe('readLines', () => {
  const text = '\uFEFF447700900001\r\n447700900002\n\n“quoted”,x\r\n447700900003';
  const expected = ['447700900001', '447700900002', '', '“quoted”,x', '447700900003'];

  it('gives the same lines however the bytes are split, even inside a UTF-8 character, a CRLF or the BOM (dropped)', async () => {
    const bytes = Buffer.from(text);
    for (let i = 0; i <= bytes.length; i++) {
      expect(await lines([bytes.subarray(0, i), bytes.subarray(i)]), `split at ${i}`).toEqual(expected);
    }
  });

  it('cuts an endless line short instead of holding it', async () => {
    const out = await lines(['1'.repeat(5000), '2'.repeat(5000), '\n447700900001\n']);
    expect(out).toHaveLength(2);
    expect(out[0]!.length).toBeLessThan(1100);
    expect(checkNumber(out[0]!)).toBe('notDigits');
    expect(out[1]).toBe('447700900001');
  });
});

describe('NumberTally', () => {
  it('skips a header without digits and blank lines, takes the first CSV column', () => {
    const t = new NumberTally();
    expect(['msisdn;name', '', '447700900001;Ann', '"447700900002",Bob', '\t', '447700900003\tCy', '447700900001'].map((l) => t.line(l)))
      .toEqual([null, null, '447700900001', '447700900002', null, '447700900003', '447700900001']);
    expect(t.info({ count: 3, repeats: 1 })).toEqual({ total: 4, validCount: 3, invalidCount: 0, duplicate: 1, errors: {} });
  });

  it('a first line with digits is a number, not a header', () => {
    const t = new NumberTally();
    t.line('+447700900001');
    expect(t.info({ count: 0, repeats: 0 })).toEqual({ total: 1, validCount: 0, invalidCount: 1, duplicate: 0, errors: { plusPrefix: 1 } });
  });
});
