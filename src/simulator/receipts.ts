import type { Clock } from '../core/clock.js';
import type { DeliverSmPdu, SubmitSmPdu } from '../smpp/pdu.js';
import type { CompiledBehaviour } from './behaviour.js';
import type { BindCounters } from './counters.js';
import { DelayQueue } from './delay-queue.js';
import { receiptId } from './message-id.js';
import { RECEIPT_STATS, formatReceiptText, receiptExcerpt, receiptWanted, type ReceiptStat } from './receipt-text.js';

/** After a receipt is answered with a non-zero deliver_sm_resp, it is sent once more this much later. */
export const REDELIVERY_DELAY_MS = 1_000;

/** A receipt to send: everything it needs from the submit_sm, taken when that arrived. */
export interface ReceiptJob {
  systemId: string;
  originBindId: number;
  /** The submitting bind's counters, for receiptsPending (kept after that bind closes). */
  origin: BindCounters;
  /** The id as the receipt writes it (text and receipted_message_id). */
  id: string;
  stat: ReceiptStat;
  excerpt: string;
  /** Wall-clock ms of the submit_sm. */
  submitDate: number;
  /** The receipt goes from the original destination back to the original source. */
  sourceAddrTon: number;
  sourceAddrNpi: number;
  sourceAddr: string;
  destAddrTon: number;
  destAddrNpi: number;
  destinationAddr: string;
  /** Set once the job has been sent again after a refusal; it is not sent a third time. */
  redelivered: boolean;
}

/** A bind a receipt can go to. */
export interface ReceiptTarget {
  readonly bindId: number;
  sendReceipt(job: ReceiptJob, pdu: Omit<DeliverSmPdu, 'sequenceNumber'>): void;
}

/** Finds a receiving bind of an account; `preferBindId` wins when routing is 'same' and it can receive. */
export interface ReceiverDirectory {
  pickReceiver(systemId: string, preferBindId: number, routing: 'same' | 'any'): ReceiptTarget | undefined;
}

/** The deliver_sm of a receipt (SMPP v3.4 §4.6.1, esm_class 0x04, Appendix B text). */
export function buildReceiptPdu(job: ReceiptJob, doneDate: number): Omit<DeliverSmPdu, 'sequenceNumber'> {
  const text = formatReceiptText({ id: job.id, stat: job.stat, submitDate: job.submitDate, doneDate, text: job.excerpt });
  return {
    command: 'deliver_sm',
    commandStatus: 0,
    serviceType: '',
    sourceAddrTon: job.sourceAddrTon,
    sourceAddrNpi: job.sourceAddrNpi,
    sourceAddr: job.sourceAddr,
    destAddrTon: job.destAddrTon,
    destAddrNpi: job.destAddrNpi,
    destinationAddr: job.destinationAddr,
    esmClass: 0x04,
    protocolId: 0,
    priorityFlag: 0,
    scheduleDeliveryTime: '',
    validityPeriod: '',
    registeredDelivery: 0,
    replaceIfPresentFlag: 0,
    dataCoding: 0,
    smDefaultMsgId: 0,
    shortMessage: Buffer.from(text, 'latin1'),
    tlvs: { receiptedMessageId: job.id, messageState: RECEIPT_STATS[job.stat] },
  };
}

/**
 * Receipts from the moment a submit_sm asks for one until a bind has taken it: one delay queue
 * (one timer) for the whole simulator, and a waiting list per account for when no receiving
 * bind is up.
 */
export class ReceiptDesk {
  readonly #queue: DelayQueue<ReceiptJob>;
  readonly #waiting = new Map<string, ReceiptJob[]>();
  #waitingCount = 0;

  constructor(
    private readonly clock: Clock,
    private readonly directory: ReceiverDirectory,
    private readonly behaviour: () => CompiledBehaviour,
    private readonly random: () => number,
  ) {
    this.#queue = new DelayQueue(clock, (jobs) => { for (const job of jobs) this.#dispatch(job); });
  }

  /** Receipts due but waiting for a receiving bind of their account. */
  get waitingForReceiver(): number {
    return this.#waitingCount;
  }

  /** The receipt a submit_sm accepted under `messageId` should get, or undefined for none. */
  prepare(origin: BindCounters, pdu: SubmitSmPdu, messageId: string): ReceiptJob | undefined {
    const b = this.behaviour();
    if (!b.spec.receipts.enabled || (pdu.registeredDelivery & 0x03) === 0) return undefined;
    const stat = b.outcomes.pick(this.random);
    if (!receiptWanted(pdu.registeredDelivery, stat)) return undefined;
    return {
      systemId: origin.systemId,
      originBindId: origin.bindId,
      origin,
      id: receiptId(messageId, b.spec.messageIdFormat, b.spec.receipts.messageIdInReceipt),
      stat,
      excerpt: receiptExcerpt(pdu.tlvs?.messagePayload && pdu.shortMessage.length === 0 ? pdu.tlvs.messagePayload : pdu.shortMessage, pdu.esmClass),
      submitDate: this.clock.wallNow(),
      sourceAddrTon: pdu.destAddrTon,
      sourceAddrNpi: pdu.destAddrNpi,
      sourceAddr: pdu.destinationAddr,
      destAddrTon: pdu.sourceAddrTon,
      destAddrNpi: pdu.sourceAddrNpi,
      destinationAddr: pdu.sourceAddr,
      redelivered: false,
    };
  }

  /** Sends `job` after the behaviour's receipt delay (counted from the submit_sm_resp). */
  schedule(job: ReceiptJob): void {
    this.#enqueue(job, this.behaviour().receiptDelay(this.random));
  }

  /** Sends `job` now, ahead of its submit_sm_resp. */
  sendNow(job: ReceiptJob): void {
    job.origin.receiptsPending++;
    this.#dispatch(job);
  }

  /** A deliver_sm_resp (or generic_nack) refused the receipt: send it once more, later. */
  refused(job: ReceiptJob): void {
    if (job.redelivered) return;
    job.redelivered = true;
    job.origin.receiptsRedelivered++;
    this.#enqueue(job, REDELIVERY_DELAY_MS);
  }

  /** Receipts sent on a link that closed before answering: they go out again, elsewhere if need be. */
  requeue(jobs: ReceiptJob[]): void {
    for (const job of jobs) {
      job.origin.receiptsRedelivered++;
      this.#enqueue(job, 0);
    }
  }

  /** A receiving bind of `systemId` came up: its waiting receipts go out (from the timer, after the bind_resp). */
  receiverBound(systemId: string): void {
    const jobs = this.#waiting.get(systemId);
    if (!jobs) return;
    this.#waiting.delete(systemId);
    this.#waitingCount -= jobs.length;
    for (const job of jobs) this.#queue.push(0, job);
  }

  /** Drops everything queued (the simulator is stopping). */
  clear(): void {
    for (const job of this.#queue.clear()) job.origin.receiptsPending--;
    for (const jobs of this.#waiting.values()) for (const job of jobs) job.origin.receiptsPending--;
    this.#waiting.clear();
    this.#waitingCount = 0;
  }

  #enqueue(job: ReceiptJob, delayMs: number): void {
    job.origin.receiptsPending++;
    this.#queue.push(delayMs, job);
  }

  #dispatch(job: ReceiptJob): void {
    const b = this.behaviour();
    const target = this.directory.pickReceiver(job.systemId, job.originBindId, b.spec.receiptRouting);
    if (!target) {
      const list = this.#waiting.get(job.systemId);
      if (list) list.push(job);
      else this.#waiting.set(job.systemId, [job]);
      this.#waitingCount++;
      return;
    }
    job.origin.receiptsPending--;
    const pdu = buildReceiptPdu(job, this.clock.wallNow());
    target.sendReceipt(job, pdu);
    const dup = b.spec.receipts.duplicateProbability;
    if (dup > 0 && this.random() < dup) target.sendReceipt(job, pdu);
  }
}
