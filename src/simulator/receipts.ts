import type { Clock } from '../core/clock.js';
import { EsmClass, type SubmitSmPdu } from '../smpp/pdu.js';
import type { CompiledBehaviour } from './behaviour.js';
import type { BindCounters } from './counters.js';
import { DelayQueue } from './delay-queue.js';
import { writeHeader } from '../smpp/wire.js';
import { writeCString, writeLatin1 } from './hot-codec.js';
import { receiptId } from './message-id.js';
import type { ReceiptOrigin, ReceiptRouting, RoutingChoice } from './receipt-routing.js';
import { RECEIPT_STATS, formatReceiptText, receiptExcerpt, receiptWanted, type ReceiptStat } from './receipt-text.js';

/** After a receipt is answered with a non-zero deliver_sm_resp, it is sent once more this much later. */
export const REDELIVERY_DELAY_MS = 1_000;

/** A receipt to send: everything it needs from the submit_sm, taken when that arrived. */
export interface ReceiptJob {
  systemId: string;
  /** The submitting bind's counters: its bindId and systemType for routing, receiptsPending (kept after that bind closes). */
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
  /** `deliverSm` is `encodeReceipt`'s; the target writes its sequence_number into it and keeps it. */
  sendReceipt(job: ReceiptJob, deliverSm: Buffer): void;
}

/** Finds a receiving bind of an account for a receipt from `origin`, as `routing` says (receipt-routing.ts). */
export interface ReceiverDirectory {
  pickReceiver(systemId: string, origin: ReceiptOrigin, routing: ReceiptRouting): RoutingChoice<ReceiptTarget> | undefined;
}

const DELIVER_SM = 0x00000005;
const HEADER = 16;
/** SMPP v3.4 §5.3.2.12 receipted_message_id (C-Octet String), §5.3.2.35 message_state (1 octet). */
const TLV_RECEIPTED_MESSAGE_ID = 0x001e;
const TLV_MESSAGE_STATE = 0x0427;
/** service_type through sm_length, less the two addresses' text: the octets every receipt has. */
const FIXED_BODY = 1 + 2 + 1 + 2 + 1 + 3 + 1 + 1 + 4 + 1;

/**
 * The deliver_sm of a receipt (SMPP v3.4 §4.6.1: esm_class 0x04, data_coding 0, the Appendix B
 * text, receipted_message_id and message_state), written by hand: one per message. Its
 * sequence_number is 0; the bind that sends it writes its own.
 */
export function encodeReceipt(job: ReceiptJob, doneDate: number): Buffer {
  const text = formatReceiptText({ id: job.id, stat: job.stat, submitDate: job.submitDate, doneDate, text: job.excerpt });
  const length = HEADER + FIXED_BODY + job.sourceAddr.length + job.destinationAddr.length + text.length + (4 + job.id.length + 1) + (4 + 1);
  const out = Buffer.allocUnsafe(length);
  writeHeader(out, DELIVER_SM, 0, 0);
  let o = HEADER;
  out[o++] = 0; // service_type ''
  out[o++] = job.sourceAddrTon;
  out[o++] = job.sourceAddrNpi;
  o = writeCString(out, job.sourceAddr, o);
  out[o++] = job.destAddrTon;
  out[o++] = job.destAddrNpi;
  o = writeCString(out, job.destinationAddr, o);
  out[o++] = EsmClass.DELIVERY_RECEIPT;
  // protocol_id, priority_flag, schedule_delivery_time '', validity_period '', registered_delivery,
  // replace_if_present_flag, data_coding, sm_default_msg_id: all 0.
  out.fill(0, o, o + 8);
  o += 8;
  out[o++] = text.length; // sm_length: at most about 130 octets (a 20-digit id and a 20-octet excerpt)
  o = writeLatin1(out, text, o);
  out.writeUInt16BE(TLV_RECEIPTED_MESSAGE_ID, o);
  out.writeUInt16BE(job.id.length + 1, o + 2);
  o = writeCString(out, job.id, o + 4);
  out.writeUInt16BE(TLV_MESSAGE_STATE, o);
  out.writeUInt16BE(1, o + 2);
  out[o + 4] = RECEIPT_STATS[job.stat];
  return out;
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
    this.#queue = new DelayQueue(clock, (jobs) => { for (const job of jobs) this.#dispatch(job); }, () => behaviour().spec.receipts.batchMs);
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

  /**
   * Sends `job` after the behaviour's receipt delay, counted from the submit_sm_resp; with no
   * delay, at once, so it leaves in the same write as that response.
   */
  schedule(job: ReceiptJob): void {
    const delay = this.behaviour().receiptDelay(this.random);
    if (delay > 0) this.#enqueue(job, delay);
    else this.sendNow(job);
  }

  /** Sends `job` now (ahead of its submit_sm_resp, when the behaviour says so). */
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
    const choice = this.directory.pickReceiver(job.systemId, job.origin, b.spec.receiptRouting);
    if (!choice) {
      const list = this.#waiting.get(job.systemId);
      if (list) list.push(job);
      else this.#waiting.set(job.systemId, [job]);
      this.#waitingCount++;
      return;
    }
    const { target, fellBack } = choice;
    job.origin.receiptsPending--;
    if (fellBack) job.origin.receiptsRoutingFallback++;
    const deliverSm = encodeReceipt(job, this.clock.wallNow());
    const dup = b.spec.receipts.duplicateProbability;
    const twice = dup > 0 && this.random() < dup;
    target.sendReceipt(job, twice ? Buffer.from(deliverSm) : deliverSm);
    if (twice) target.sendReceipt(job, deliverSm);
  }
}
