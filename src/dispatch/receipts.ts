/**
 * Receipts of one upstream: a deliver_sm or data_sm read into what it says (the domain's
 * lenient parser), what it means for the part (the status model), and the keys under which its
 * part may be stored (id normalisation, with the upstream's id format learnt in auto mode). The
 * lookup itself is the store's; it reports back which key found the part so the format settles.
 */
import { parseTimeZone, type SmscTimeZone } from '../core/time-zone.js';
import { IdFormatLearner, type ReceiptIdFormat } from '../sms/message-id.js';
import { isReceipt, parseReceipt, type Receipt, type ReceiptSource } from '../sms/receipt.js';
import { statusFromReceipt, type ReceiptOutcome } from '../sms/status.js';

export interface ReceiptSettings {
  receiptIdFormat: ReceiptIdFormat;
  /** Validated by the configuration; an unknown zone would leave dates unconverted. */
  smscTimeZone: string;
}

export interface ReadReceipt {
  receipt: Receipt;
  outcome: ReceiptOutcome;
  /** Keys to look the part up by, best first; empty when the receipt names no id. */
  keys: string[];
}

export class UpstreamReceipts {
  readonly #learner: IdFormatLearner;
  readonly #zone: SmscTimeZone | string;

  constructor(settings: ReceiptSettings) {
    this.#learner = new IdFormatLearner(settings.receiptIdFormat);
    this.#zone = parseTimeZone(settings.smscTimeZone) ?? settings.smscTimeZone;
  }

  /** Whether a deliver_sm/data_sm is a receipt (else it is an MO message). */
  static isReceipt(pdu: { esmClass: number }): boolean {
    return isReceipt(pdu.esmClass);
  }

  read(pdu: ReceiptSource): ReadReceipt {
    const receipt = parseReceipt(pdu, { timeZone: this.#zone });
    const outcome = statusFromReceipt(receipt.stat, receipt.err);
    const keys = receipt.id === null ? [] : this.#learner.candidateKeys(receipt.id);
    return { receipt, outcome, keys };
  }

  /** After a lookup: which of `read().keys` found a part. Teaches the format in auto mode. */
  found(receiptId: string, foundKeys: readonly string[]): void {
    this.#learner.observeLookup(receiptId, foundKeys);
  }

  /** The settled id format, or null while it is still being learnt. */
  get idFormat(): string | null {
    return this.#learner.format;
  }
}
