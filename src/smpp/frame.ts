import { ErrorCode, SmppdError } from '../core/errors.js';
import { MAX_PDU_LENGTH } from './wire.js';

/** SMPP v3.4 §3.2: every PDU starts with a 16-byte header. */
export const HEADER_LENGTH = 16;

/**
 * Splits a byte stream into whole PDUs by command_length. Pure: bytes in, frames out.
 * A command_length below 16 or above the maximum cannot be resynchronised, so it is an error
 * the connection answers by resetting the link (cloudhopper does the same).
 */
export class FrameReader {
  #pending: Buffer[] = [];
  #pendingBytes = 0;

  constructor(private readonly maxLength = MAX_PDU_LENGTH) {}

  /** Bytes buffered but not yet a whole PDU. */
  get buffered(): number {
    return this.#pendingBytes;
  }

  /** Appends `chunk` and returns every PDU it completes, in order. Throws PDU_TOO_LONG / PDU_MALFORMED. */
  push(chunk: Buffer): Buffer[] {
    let data: Buffer;
    if (this.#pendingBytes === 0) {
      data = chunk;
    } else {
      this.#pending.push(chunk);
      data = Buffer.concat(this.#pending, this.#pendingBytes + chunk.length);
    }
    const frames: Buffer[] = [];
    let offset = 0;
    while (data.length - offset >= 4) {
      const length = data.readUInt32BE(offset);
      if (length < HEADER_LENGTH) {
        throw new SmppdError(ErrorCode.PDU_MALFORMED, `command_length ${length} is shorter than the 16-byte header`);
      }
      if (length > this.maxLength) {
        throw new SmppdError(ErrorCode.PDU_TOO_LONG, `command_length ${length} exceeds the maximum of ${this.maxLength}`);
      }
      if (data.length - offset < length) break;
      frames.push(data.subarray(offset, offset + length));
      offset += length;
    }
    const rest = data.length - offset;
    if (rest === 0) {
      this.#pending = [];
      this.#pendingBytes = 0;
    } else {
      // Copy the tail so a large chunk is not kept alive by a few trailing bytes.
      this.#pending = [Buffer.from(data.subarray(offset))];
      this.#pendingBytes = rest;
    }
    return frames;
  }

  reset(): void {
    this.#pending = [];
    this.#pendingBytes = 0;
  }
}
