import type { Socket } from 'node:net';
import type { Clock } from '../core/clock.js';
import type { Log } from '../core/log.js';
import { FrameReader } from '../smpp/frame.js';
import { isResponseId, type BindPdu, type DeliverSmPdu, type Pdu, type SubmitSmPdu } from '../smpp/pdu.js';
import { decodePdu, encodePdu } from '../smpp/wire.js';
import { encodeGenericNack, encodeSubmitSmResp, readSubmitSm } from './hot-codec.js';
import type { CompiledBehaviour } from './behaviour.js';
import { SimStatus, statusName } from './command-status.js';
import { BindCounters, bump, type BindMode } from './counters.js';
import { BatchWriter } from './batch-writer.js';
import { DelayQueue } from './delay-queue.js';
import type { ReceiptDesk, ReceiptJob, ReceiptTarget } from './receipts.js';
import { SubmitChecks, type SubmitThrottle } from './submit-checks.js';

const SUBMIT_SM = 0x00000004;
const DELIVER_SM_RESP = 0x80000005;

/** The system_id the simulator answers binds with. */
export const SMSC_SYSTEM_ID = 'smppd-sim';

/** What a connection needs from the simulator: narrow, so the two can change apart. */
export interface ConnectionHost {
  readonly clock: Clock;
  readonly log: Log;
  readonly random: () => number;
  readonly receipts: ReceiptDesk;
  /** Counters for what connections do before they bind. */
  readonly unboundCounters: BindCounters;
  behaviour(): CompiledBehaviour;
  /** 0 when the credentials are good and the account has room, else the bind_resp status. */
  authorise(pdu: BindPdu): number;
  bindRejected(status: number): void;
  /** Registers a successful bind and returns its counters (with its bindId). */
  bound(conn: SimConnection, systemId: string, systemType: string, mode: BindMode): BindCounters;
  /** The rate limit every bind of `systemId` shares. */
  accountThrottle(systemId: string): SubmitThrottle;
  /** The bind is over (unbind or close); `unanswered` are receipts it never answered. */
  unbound(conn: SimConnection, unanswered: ReceiptJob[]): void;
  closed(conn: SimConnection): void;
  submitReceived(now: number): void;
  nextMessageId(): string;
  record(bindId: number, pdu: SubmitSmPdu, messageId: string): void;
}

/** A submit_sm's answer held back by responseDelayMs. */
interface PendingResponse {
  bytes: Buffer;
  status: number;
  nack: boolean;
  receipt: ReceiptJob | undefined;
}

const BIND_MODES: Record<BindPdu['command'], BindMode> = {
  bind_transmitter: 'transmitter',
  bind_receiver: 'receiver',
  bind_transceiver: 'transceiver',
};

/**
 * One ESME's connection to the simulator: frames, answers, and writes everything produced by
 * one read (or one timer) as one socket write. Per submit_sm: decode, a few counters, encode.
 */
export class SimConnection implements ReceiptTarget {
  readonly remoteAddress: string;
  readonly #socket: Socket;
  readonly #host: ConnectionHost;
  readonly #reader = new FrameReader();
  readonly #delayed: DelayQueue<PendingResponse>;
  readonly #awaiting = new Map<number, ReceiptJob | null>();
  #counters: BindCounters;
  #mode: BindMode | undefined;
  #systemId = '';
  #systemType = '';
  readonly #writer: BatchWriter;
  /** submit_sm responses in the writer's current batch, not yet handed to the socket. */
  #responsesInBatch = 0;
  #closed = false;
  #seq = 0;
  #submits = 0;
  /** Replaced on the bind, when the account is known; a submit_sm before it is refused unchecked. */
  #checks = new SubmitChecks();

  constructor(socket: Socket, host: ConnectionHost) {
    this.#socket = socket;
    this.#host = host;
    this.#counters = host.unboundCounters;
    this.remoteAddress = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? 0}`;
    this.#delayed = new DelayQueue(host.clock, (due) => { for (const r of due) this.#writeResponse(r.bytes, r.status, r.nack, r.receipt); });
    this.#writer = new BatchWriter(socket, () => {
      // A submit_sm stops being outstanding when its response is handed to the socket.
      this.#counters.outstanding -= this.#responsesInBatch;
      this.#responsesInBatch = 0;
    });
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', (e) => host.log.debug({ event: 'sim_socket_error', remote: this.remoteAddress, err: e.message }, 'simulator socket error'));
    socket.on('close', () => this.#teardown());
  }

  get bindId(): number {
    return this.#mode ? this.#counters.bindId : 0;
  }

  get systemId(): string {
    return this.#systemId;
  }

  /** The system_type the bind PDU carried ('' before the bind, or when it carried none). */
  get systemType(): string {
    return this.#systemType;
  }

  get mode(): BindMode | undefined {
    return this.#mode;
  }

  get canReceive(): boolean {
    return this.#mode === 'receiver' || this.#mode === 'transceiver';
  }

  /** Destroys the socket at once (the SMSC dropping the link); nothing queued is written. */
  destroy(): void {
    this.#teardown();
    this.#socket.destroy();
  }

  /** Writes raw bytes (for malformed-PDU tests), in order with everything else queued. */
  writeRaw(bytes: Buffer): void {
    this.#send(bytes);
  }

  sendReceipt(job: ReceiptJob, deliverSm: Buffer): void {
    const seq = this.#nextSeq();
    this.#awaiting.set(seq, job);
    this.#counters.receiptsSent++;
    deliverSm.writeUInt32BE(seq, 12);
    this.#send(deliverSm);
  }

  /**
   * Sends a mobile-originated deliver_sm; returns its sequence number. Throws PDU_FIELD_INVALID
   * (an address too long, a NUL) with nothing sent, awaited or counted.
   */
  sendMo(pdu: Omit<DeliverSmPdu, 'sequenceNumber'>): number {
    const seq = this.#nextSeq();
    const bytes = encodePdu({ ...pdu, sequenceNumber: seq });
    this.#awaiting.set(seq, null);
    this.#counters.moSent++;
    this.#send(bytes);
    return seq;
  }

  #nextSeq(): number {
    this.#seq = this.#seq >= 0x7fffffff ? 1 : this.#seq + 1;
    return this.#seq;
  }

  // -------------------------------------------------------------------------------------------
  // Reading

  #onData(chunk: Buffer): void {
    if (this.#closed) return;
    let frames: Buffer[];
    try {
      frames = this.#reader.push(chunk);
    } catch (e) {
      // A bad command_length cannot be resynchronised: reset the link (cloudhopper does the same).
      this.#counters.malformedReceived++;
      this.#host.log.warn({ event: 'sim_bad_frame', remote: this.remoteAddress, err: (e as Error).message }, 'closing connection: bad command_length');
      this.destroy();
      return;
    }
    for (const frame of frames) {
      if (this.#closed || this.#writer.ending) return;
      this.#onFrame(frame);
    }
  }

  #onFrame(frame: Buffer): void {
    const commandId = frame.readUInt32BE(4);
    // deliver_sm_resp is half of all traffic with receipts on, and only its header matters here.
    if (commandId === DELIVER_SM_RESP) {
      return this.#onDeliverAnswer(frame.readUInt32BE(12), frame.readUInt32BE(8), false);
    }
    if (commandId === SUBMIT_SM) {
      const submit = readSubmitSm(frame);
      if (submit) return this.#onPdu(submit);
    }
    const decoded = decodePdu(frame);
    if (!decoded.ok) {
      this.#counters.malformedReceived++;
      this.#host.log.debug({ event: 'sim_malformed', remote: this.remoteAddress, reason: decoded.reason }, 'malformed PDU');
      // Never answer a response; a request gets generic_nack under its own sequence number.
      if (!isResponseId(decoded.commandId)) this.#nack(decoded.sequenceNumber, decoded.nackStatus);
      return;
    }
    this.#onPdu(decoded.pdu);
  }

  #onPdu(pdu: Pdu): void {
    switch (pdu.command) {
      case 'bind_transmitter':
      case 'bind_receiver':
      case 'bind_transceiver':
        return this.#onBind(pdu);
      case 'enquire_link':
        this.#counters.enquireLinksReceived++;
        if (this.#host.behaviour().spec.answerEnquireLink) this.#respond({ command: 'enquire_link_resp', sequenceNumber: pdu.sequenceNumber, commandStatus: 0 });
        return;
      case 'deliver_sm_resp':
        return this.#onDeliverAnswer(pdu.sequenceNumber, pdu.commandStatus, false);
      case 'generic_nack':
        this.#counters.genericNacksReceived++;
        return this.#onDeliverAnswer(pdu.sequenceNumber, pdu.commandStatus || SimStatus.ESME_RSYSERR, true);
      case 'bind_transmitter_resp':
      case 'bind_receiver_resp':
      case 'bind_transceiver_resp':
      case 'submit_sm_resp':
      case 'data_sm_resp':
      case 'enquire_link_resp':
      case 'unbind_resp':
        return; // answers to requests the simulator never sends
      case 'other':
        if (isResponseId(pdu.commandId)) return;
        // SMPP v3.4 §5.1.3: an id that is no v3.4 command is ESME_RINVCMDID, bound or not.
        if (pdu.name === 'unknown' || this.#mode) return this.#nack(pdu.sequenceNumber, SimStatus.ESME_RINVCMDID);
        return this.#nack(pdu.sequenceNumber, SimStatus.ESME_RINVBNDSTS);
      case 'unbind':
      case 'submit_sm':
      case 'deliver_sm':
      case 'data_sm':
        if (!this.#mode) return this.#rejectUnbound(pdu.command, pdu.sequenceNumber);
        if (pdu.command === 'unbind') return this.#onUnbind(pdu.sequenceNumber);
        if (pdu.command === 'submit_sm') return this.#onSubmit(pdu);
        // An ESME does not send deliver_sm or data_sm to this SMSC: not a command it serves.
        return this.#nack(pdu.sequenceNumber, SimStatus.ESME_RINVCMDID);
      default: {
        const never: never = pdu;
        return never;
      }
    }
  }

  /** SMPP v3.4 §2.3: before a bind, a request is answered ESME_RINVBNDSTS in its own response. */
  #rejectUnbound(command: 'unbind' | 'submit_sm' | 'deliver_sm' | 'data_sm', seq: number): void {
    const status = SimStatus.ESME_RINVBNDSTS;
    switch (command) {
      case 'unbind':
        return this.#respond({ command: 'unbind_resp', sequenceNumber: seq, commandStatus: status });
      case 'submit_sm':
      case 'deliver_sm':
      case 'data_sm':
        return this.#respond({ command: `${command}_resp`, sequenceNumber: seq, commandStatus: status, messageId: '' });
    }
  }

  #onBind(pdu: BindPdu): void {
    const command = `${pdu.command}_resp` as const;
    const status = this.#mode ? SimStatus.ESME_RALYBND : this.#host.authorise(pdu);
    if (status !== 0) {
      this.#host.bindRejected(status);
      this.#host.log.info({ event: 'sim_bind_rejected', remote: this.remoteAddress, systemId: pdu.systemId, status: statusName(status) }, 'bind rejected');
      // The connection stays open: the client decides whether to try again or close.
      return this.#respond({ command, sequenceNumber: pdu.sequenceNumber, commandStatus: status, systemId: SMSC_SYSTEM_ID });
    }
    this.#respond({ command, sequenceNumber: pdu.sequenceNumber, commandStatus: 0, systemId: SMSC_SYSTEM_ID });
    this.#mode = BIND_MODES[pdu.command];
    this.#systemId = pdu.systemId;
    this.#systemType = pdu.systemType;
    this.#counters = this.#host.bound(this, pdu.systemId, pdu.systemType, this.#mode);
    this.#checks = new SubmitChecks(this.#host.accountThrottle(pdu.systemId));
  }

  #onUnbind(seq: number): void {
    this.#counters.unbindsReceived++;
    if (!this.#host.behaviour().spec.answerUnbind) return;
    this.#respond({ command: 'unbind_resp', sequenceNumber: seq, commandStatus: 0 });
    this.#writer.endAfterFlush();
    this.#host.unbound(this, this.#takeUnanswered());
  }

  #onSubmit(pdu: SubmitSmPdu): void {
    const host = this.#host;
    const c = this.#counters;
    const now = host.clock.now();
    const b = host.behaviour();
    const spec = b.spec;
    c.submitReceived(now);
    host.submitReceived(now);
    if (spec.dropAfterSubmits > 0 && ++this.#submits >= spec.dropAfterSubmits) {
      host.record(c.bindId, pdu, '');
      host.log.info({ event: 'sim_drop_after_submits', bindId: c.bindId, submits: this.#submits }, 'dropping connection (dropAfterSubmits)');
      this.destroy();
      return;
    }
    let status: number;
    let nack = false;
    let messageId = '';
    let receipt: ReceiptJob | undefined;
    const refusal = this.#checks.refusal(pdu, this.#mode, b, host.random, now);
    if (refusal === 'generic_nack') {
      status = SimStatus.ESME_RSYSERR;
      nack = true;
    } else if (refusal !== 0) {
      status = refusal;
      if (status === SimStatus.ESME_RTHROTTLED) c.throttled++;
    } else {
      status = b.submitStatus.pick(host.random);
      if (status === 0) {
        messageId = host.nextMessageId();
        receipt = host.receipts.prepare(c, pdu, messageId);
      }
    }
    host.record(c.bindId, pdu, messageId);
    const bytes = nack ? encodeGenericNack(pdu.sequenceNumber, status) : encodeSubmitSmResp(pdu.sequenceNumber, status, messageId);
    if (receipt && spec.receipts.beforeResponseProbability > 0 && host.random() < spec.receipts.beforeResponseProbability) {
      host.receipts.sendNow(receipt);
      receipt = undefined;
    }
    const delay = b.responseDelay(host.random);
    if (delay > 0) this.#delayed.push(delay, { bytes, status, nack, receipt });
    else this.#writeResponse(bytes, status, nack, receipt);
  }

  #onDeliverAnswer(seq: number, status: number, nack: boolean): void {
    const c = this.#counters;
    if (!nack) {
      c.deliverSmRespReceived++;
      bump(c.deliverSmResponses, statusName(status));
    }
    const job = this.#awaiting.get(seq);
    if (job === undefined) return; // not ours (or already answered)
    this.#awaiting.delete(seq);
    if (job && status !== 0) this.#host.receipts.refused(job);
  }

  #takeUnanswered(): ReceiptJob[] {
    const jobs = new Set<ReceiptJob>(); // a duplicated receipt is one job under two sequence numbers
    for (const job of this.#awaiting.values()) if (job) jobs.add(job);
    this.#awaiting.clear();
    return [...jobs];
  }

  // -------------------------------------------------------------------------------------------
  // Writing: everything queued in one turn of the event loop leaves in one socket write (BatchWriter).

  #respond(pdu: Pdu): void {
    this.#send(encodePdu(pdu));
  }

  #nack(seq: number, status: number): void {
    this.#counters.genericNacksSent++;
    this.#respond({ command: 'generic_nack', sequenceNumber: seq, commandStatus: status });
  }

  #writeResponse(bytes: Buffer, status: number, nack: boolean, receipt: ReceiptJob | undefined): void {
    if (this.#closed) return;
    const c = this.#counters;
    this.#send(bytes);
    this.#responsesInBatch++;
    bump(c.submitResponses, statusName(status));
    if (nack) c.genericNacksSent++;
    if (receipt) this.#host.receipts.schedule(receipt);
  }

  #send(bytes: Buffer): void {
    if (!this.#closed) this.#writer.write(bytes);
  }

  #teardown(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#delayed.clear();
    this.#writer.close();
    this.#responsesInBatch = 0;
    this.#reader.reset();
    if (this.#mode) {
      this.#counters.outstanding = 0; // nothing is outstanding on a dead link
      if (!this.#writer.ending) this.#host.unbound(this, this.#takeUnanswered());
    }
    this.#host.closed(this);
  }
}
