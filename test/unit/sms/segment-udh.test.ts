import { describe, expect, it } from 'vitest';
import {
  buildUdh,
  concatElement,
  IEI,
  nationalShiftElements,
  parseUdh,
  udhOctets,
  udhSeptets,
} from '../../../src/sms/udh.js';

const bytes = (h: string): Buffer => Buffer.from(h, 'hex');

describe('UDH (TS 23.040 §9.2.3.24)', () => {
  it('builds the 8-bit concatenation header 05 00 03 ref total seq', () => {
    expect(buildUdh([concatElement(0x1ab, 3, 2, 8)]).toString('hex')).toBe('050003ab0302');
  });

  it('builds the 16-bit concatenation header 06 08 04 refHi refLo total seq', () => {
    expect(buildUdh([concatElement(0x1234, 3, 2, 16)]).toString('hex')).toBe('060804123403' + '02');
  });

  it('builds national language elements, locking (0x25) before single (0x24)', () => {
    expect(buildUdh(nationalShiftElements({ locking: 3, single: 1 })).toString('hex')).toBe('06250103240101');
    expect(nationalShiftElements({ locking: 0, single: 0 })).toEqual([]);
    expect(buildUdh([]).length).toBe(0);
  });

  it('counts what a header costs', () => {
    expect(udhOctets([concatElement(1, 2, 1, 8)])).toBe(6);
    expect(udhOctets([])).toBe(0);
    expect([0, 4, 6, 7, 9].map(udhSeptets)).toEqual([0, 5, 7, 8, 11]);
  });

  it('parses concatenation, national shift and the body', () => {
    const parsed = parseUdh(bytes('0b0003ab03022501012401036162'));
    expect(parsed).toMatchObject({
      udhLength: 12,
      concat: { ref: 0xab, total: 3, seq: 2, referenceBits: 8 },
      nationalShift: { locking: 1, single: 3 },
    });
    expect(parsed?.elements.map((e) => e.iei)).toEqual([IEI.CONCAT_8, IEI.NATIONAL_LOCKING_SHIFT, IEI.NATIONAL_SINGLE_SHIFT]);
    expect(parsed?.body.toString()).toBe('ab');
    expect(parseUdh(bytes('0608041234030161'))?.concat).toEqual({ ref: 0x1234, total: 3, seq: 1, referenceBits: 16 });
  });

  it('keeps unknown elements and gives an empty body when the header is all there is', () => {
    const parsed = parseUdh(bytes('040a020102'));
    expect(parsed?.elements).toEqual([{ iei: 0x0a, data: bytes('0102') }]);
    expect(parsed?.concat).toBeUndefined();
    expect(parsed?.body.length).toBe(0);
  });

  it('ignores a concatenation element with a zero total or a sequence number outside 1..total (§9.2.3.24.1)', () => {
    expect(parseUdh(bytes('050003010000'))?.concat).toBeUndefined();
    expect(parseUdh(bytes('050003010200'))?.concat).toBeUndefined();
    expect(parseUdh(bytes('050003010203'))?.concat).toBeUndefined();
    expect(parseUdh(bytes('0400020102'))?.concat).toBeUndefined();
  });

  it('takes the last of a repeated element', () => {
    expect(parseUdh(bytes('0a000301020100030902026162'))?.concat).toMatchObject({ ref: 9, seq: 2 });
  });

  it('refuses a header that runs past the data', () => {
    expect(parseUdh(bytes(''))).toBeUndefined();
    expect(parseUdh(bytes('05000301'))).toBeUndefined();
    expect(parseUdh(bytes('0300050102'))).toBeUndefined();
    expect(parseUdh(bytes('0100'))).toBeUndefined();
  });

  it('round-trips what it builds', () => {
    const elements = [concatElement(0xbeef, 9, 4, 16), ...nationalShiftElements({ single: 2 })];
    const parsed = parseUdh(Buffer.concat([buildUdh(elements), bytes('6162')]));
    expect(parsed?.elements).toEqual(elements);
    expect(parsed?.concat).toEqual({ ref: 0xbeef, total: 9, seq: 4, referenceBits: 16 });
    expect(parsed?.nationalShift).toEqual({ single: 2 });
  });
});
