/**
 * Builds SMPP wire bytes by hand, independently of the codec under test, so encoder and
 * decoder cannot share a mistake with the tests.
 */
export class PduBytes {
  #parts: Buffer[] = [];

  constructor(private readonly commandId: number, private readonly sequence: number, private readonly status = 0) {}

  u8(v: number): this {
    this.#parts.push(Buffer.from([v]));
    return this;
  }

  u16(v: number): this {
    const b = Buffer.alloc(2);
    b.writeUInt16BE(v);
    this.#parts.push(b);
    return this;
  }

  u32(v: number): this {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(v >>> 0);
    this.#parts.push(b);
    return this;
  }

  /** A C-Octet String: ASCII then NUL. */
  cstr(s: string): this {
    this.#parts.push(Buffer.from(s, 'latin1'), Buffer.from([0]));
    return this;
  }

  /** sm_length then the octets. */
  sm(bytes: Buffer): this {
    return this.u8(bytes.length).raw(bytes);
  }

  tlv(tag: number, value: Buffer): this {
    return this.u16(tag).u16(value.length).raw(value);
  }

  raw(bytes: Buffer): this {
    this.#parts.push(bytes);
    return this;
  }

  build(): Buffer {
    const body = Buffer.concat(this.#parts);
    const head = Buffer.alloc(16);
    head.writeUInt32BE(16 + body.length, 0);
    head.writeUInt32BE(this.commandId >>> 0, 4);
    head.writeUInt32BE(this.status >>> 0, 8);
    head.writeUInt32BE(this.sequence >>> 0, 12);
    return Buffer.concat([head, body]);
  }
}

/** submit_sm bytes with the common defaults (SMPP v3.4 §4.4.1 field order). */
export function submitSmBytes(seq: number, dest: string, text: Buffer, opts: { source?: string; dataCoding?: number; esmClass?: number; registeredDelivery?: number } = {}): PduBytes {
  return new PduBytes(0x00000004, seq)
    .cstr('').u8(0).u8(0).cstr(opts.source ?? '')
    .u8(1).u8(1).cstr(dest)
    .u8(opts.esmClass ?? 0).u8(0).u8(0)
    .cstr('').cstr('')
    .u8(opts.registeredDelivery ?? 0).u8(0).u8(opts.dataCoding ?? 0).u8(0)
    .sm(text);
}

/** deliver_sm bytes of an MO message in the default alphabet (SMPP v3.4 §4.6.1, the layout of submit_sm). */
export function deliverSmBytes(seq: number, source: string, dest: string, text: Buffer, opts: { esmClass?: number; dataCoding?: number } = {}): PduBytes {
  return new PduBytes(0x00000005, seq)
    .cstr('').u8(1).u8(1).cstr(source)
    .u8(0).u8(0).cstr(dest)
    .u8(opts.esmClass ?? 0).u8(0).u8(0)
    .cstr('').cstr('')
    .u8(0).u8(0).u8(opts.dataCoding ?? 0).u8(0)
    .sm(text);
}
