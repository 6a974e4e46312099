import { describe, expect, it } from 'vitest';
import { FrameReader } from '../../../src/smpp/frame.js';
import { PduBytes, submitSmBytes } from '../../support/pdu-bytes.js';

const stream = Buffer.concat([
  new PduBytes(0x00000015, 1).build(),
  submitSmBytes(2, '4915112345678', Buffer.from('hello')).build(),
  new PduBytes(0x80000004, 3).cstr('abc').build(),
]);

describe('FrameReader', () => {
  it('returns the same frames however the stream is split in two', () => {
    for (let cut = 0; cut <= stream.length; cut++) {
      const reader = new FrameReader();
      const frames = [...reader.push(stream.subarray(0, cut)), ...reader.push(stream.subarray(cut))];
      expect(Buffer.concat(frames).equals(stream)).toBe(true);
      expect(frames).toHaveLength(3);
      expect(reader.buffered).toBe(0);
    }
  });

  it('returns the same frames when fed one byte at a time', () => {
    const reader = new FrameReader();
    const frames: Buffer[] = [];
    for (let i = 0; i < stream.length; i++) frames.push(...reader.push(stream.subarray(i, i + 1)));
    expect(frames.map((f) => f.readUInt32BE(12))).toEqual([1, 2, 3]);
  });

  it('rejects a command_length shorter than the header', () => {
    const bad = Buffer.from('0000000800000015', 'hex');
    expect(() => new FrameReader().push(bad)).toThrow(/shorter than the 16-byte header/);
  });

  it('rejects a command_length above the maximum before buffering the body', () => {
    const bad = Buffer.alloc(16);
    bad.writeUInt32BE(10_000_000, 0);
    expect(() => new FrameReader(65_536).push(bad.subarray(0, 4))).toThrow(/exceeds the maximum/);
  });
});
