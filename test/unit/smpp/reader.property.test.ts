/**
 * The PDU reader, pure, on hostile bytes (test/support/smpp-fuzz.ts): the framer either frames or
 * refuses with a coded error, however the stream is split; the decoder never throws, and a body
 * it cannot read is a value naming the generic_nack status. The same inputs go over sockets in
 * test/integration/smsc-fuzz.property.test.ts; here many more of them, fast.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSmppdError } from '../../../src/core/errors.js';
import { FrameReader } from '../../../src/smpp/frame.js';
import { decodePdu } from '../../../src/smpp/wire.js';
import { frameStream, HEADER, hostileFrame, hostileStream, MAX_LENGTH, numbered } from '../../support/smpp-fuzz.js';

/** Fixed: every run tries the same inputs (fast-check prints the seed and path of a failure to replay it). */
const SEED = 0x22f0;

/** `frame` with command_length saying its real size: what FrameReader hands the decoder. */
function whole(frame: Buffer): Buffer {
  const out = frame.length >= HEADER ? Buffer.from(frame) : Buffer.concat([frame, Buffer.alloc(HEADER - frame.length)]);
  out.writeUInt32BE(out.length, 0);
  return out;
}

describe('the PDU reader on hostile bytes', () => {
  it('FrameReader frames as command_length says, whatever the split, or refuses a bad length with a coded error', () => {
    fc.assert(
      fc.property(hostileStream, fc.array(fc.nat(), { maxLength: 6 }), (frames, cuts) => {
        let n = 0;
        const stream = numbered(frames, () => ++n);
        const expected = frameStream(stream);
        const reader = new FrameReader();
        const got: Buffer[] = [];
        const points = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
        let error: unknown;
        try {
          let from = 0;
          for (const to of [...points, stream.length]) {
            got.push(...reader.push(stream.subarray(from, to)));
            from = to;
          }
        } catch (e) {
          error = e;
        }
        if (expected.badLength) {
          expect(isSmppdError(error, 'PDU_MALFORMED') || isSmppdError(error, 'PDU_TOO_LONG'), String(error)).toBe(true);
          // Never more than the whole PDUs before the bad length (a chunk that holds the bad length is refused whole).
          expect(got.length).toBeLessThanOrEqual(expected.frames.length);
        } else {
          expect(error).toBeUndefined();
          expect(got.map((f) => f.readUInt32BE(12))).toEqual(expected.frames.map((f) => f.sequenceNumber));
          expect(reader.buffered > 0).toBe(expected.partial);
        }
        for (const f of got) expect(f.length).toBe(f.readUInt32BE(0));
      }),
      { seed: SEED, numRuns: 5_000 },
    );
  });

  it('decodePdu never throws: a frame is a PDU, or a bad body with its sequence number and the generic_nack status', () => {
    fc.assert(
      fc.property(hostileFrame, fc.integer({ min: 1, max: 0x7fffffff }), (frame, seq) => {
        const f = whole(frame);
        if (f.length > MAX_LENGTH) return;
        f.writeUInt32BE(seq, 12);
        const decoded = decodePdu(f);
        if (decoded.ok) {
          expect(decoded.pdu.sequenceNumber).toBe(seq);
        } else {
          expect(decoded.sequenceNumber).toBe(seq);
          expect([0x02, 0x08]).toContain(decoded.nackStatus);
          expect(decoded.reason).not.toBe('');
        }
      }),
      { seed: SEED + 1, numRuns: 10_000 },
    );
  });
});
