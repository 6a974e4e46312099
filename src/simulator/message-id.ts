export type MessageIdFormat = 'hex' | 'decimal';
/** How a receipt writes the id: as in submit_sm_resp, or always in one base (an SMSC quirk). */
export type ReceiptIdStyle = 'same' | 'decimal' | 'hex';

/**
 * Message ids unique across the simulator's life: a random prefix chosen at each start, then a
 * counter that never goes back. Hex ids are 16 lowercase digits (prefix 8, counter 8); decimal
 * ids are 15 digits (prefix 5, counter 10). Neither starts with 0, so converting between the
 * bases and back gives the same string.
 */
export class MessageIdSource {
  #hexPrefix = '';
  #decimalPrefix = '';
  #counter = 0;

  constructor(random: () => number) {
    this.newPrefix(random);
  }

  /** Called on every start, so two runs of the simulator never hand out the same id. */
  newPrefix(random: () => number): void {
    this.#hexPrefix = (0x10000000 + Math.floor(random() * 0xefffffff)).toString(16);
    this.#decimalPrefix = String(10000 + Math.floor(random() * 90000));
  }

  next(format: MessageIdFormat): string {
    const n = ++this.#counter;
    return format === 'hex'
      ? this.#hexPrefix + (n % 0x100000000).toString(16).padStart(8, '0')
      : this.#decimalPrefix + String(n % 1e10).padStart(10, '0');
  }
}

/** The id as a receipt writes it. */
export function receiptId(id: string, format: MessageIdFormat, style: ReceiptIdStyle): string {
  if (style === 'same' || style === format) return id;
  return style === 'decimal' ? BigInt(`0x${id}`).toString(10) : BigInt(id).toString(16);
}
