import type { Clock, TimerHandle } from '../core/clock.js';
import type { ScopedWarnings } from '../core/warning-throttle.js';
import { BindHandshake, type BindIdentity } from './bind-handshake.js';
import { Status, statusName } from './command-status.js';
import { Connection, type ConnectSettings } from './connection.js';
import { Keepalive } from './keepalive.js';
import { isResponseId, type DataSmPdu, type DeliverSmPdu, type Pdu, type SubmitSmPdu } from './pdu.js';
import { Window } from './window.js';
import { commandName, encodePdu } from './wire.js';

export { BindRejectedError, type BindMode } from './bind-handshake.js';

/** One session's settings. Times in milliseconds. */
export interface SessionSettings extends BindIdentity {
  connect: ConnectSettings;
  /** Maximum submit_sm outstanding (the provider allows 100). */
  window: number;
  /** A submit_sm with no response after this long has an uncertain outcome. */
  responseTimeoutMs: number;
  /** Interval of our own enquire_link. */
  enquireLinkMs: number;
}

/** A submit_sm answered by submit_sm_resp, or by generic_nack (messageId ''). */
export interface SubmitResponse {
  commandStatus: number;
  messageId: string;
  /** Milliseconds from write to response. */
  latencyMs: number;
}

export interface SessionHandlers<T> {
  response(ctx: T, response: SubmitResponse): void;
  /** No response within the timeout, or the connection went away with the request outstanding. */
  uncertain(ctx: T, cause: 'timeout' | 'connection_lost'): void;
  /** A response for a request that had already timed out (within the grace period). */
  late(ctx: T, response: SubmitResponse): void;
  /** A timed-out request's grace period ended without a response. */
  lateExpired(ctx: T): void;
  /** A receipt or MO message; resolves to the command_status of deliver_sm_resp. */
  deliver(pdu: DeliverSmPdu | DataSmPdu): Promise<number>;
  /** A window slot was freed or the socket drained: the bind may pull more work. */
  ready(): void;
  /** The session ended; every outstanding request has been reported uncertain already. */
  closed(reason: string): void;
}

interface LateEntry<T> {
  ctx: T;
  sentAt: number;
  graceUntil: number;
}

/**
 * One bound SMPP session over one connection: bind, sequence numbers, the submit_sm window with
 * per-request expiry, late responses, enquire_link both ways, unbind both ways, generic_nack for
 * what it cannot answer. It never retries or paces: the bind above it decides that.
 */
export class Session<T> {
  #conn!: Connection;
  #seq = 0;
  #state: 'binding' | 'bound' | 'unbinding' | 'closed' = 'binding';
  readonly #window: Window<T>;
  #late = new Map<number, LateEntry<T>>();
  #sweep: TimerHandle | undefined;
  #sweepAt = Infinity;
  #keepalive: Keepalive | undefined;
  #handshake!: BindHandshake;
  #unbindWaiter: { seq: number; resolve: () => void } | undefined;
  #idleWaiters: Array<() => void> = [];

  private constructor(
    private readonly settings: SessionSettings,
    private readonly clock: Clock,
    private readonly handlers: SessionHandlers<T>,
    private readonly warnings: ScopedWarnings,
  ) {
    this.#window = new Window<T>(settings.window, settings.responseTimeoutMs);
  }

  /**
   * Connects and binds. Rejects with BindRejectedError or a CONNECTION_CLOSED SmppdError; with
   * PDU_FIELD_INVALID, before connecting, when the settings do not fit a bind PDU. `warnings`
   * takes what the SMSC sends that is wrong (malformed PDUs, responses to nothing): once per kind
   * per interval, not once per PDU.
   */
  static async open<T>(settings: SessionSettings, clock: Clock, handlers: SessionHandlers<T>, warnings: ScopedWarnings): Promise<Session<T>> {
    const session = new Session<T>(settings, clock, handlers, warnings);
    session.#handshake = new BindHandshake(settings, session.#nextSeq());
    session.#conn = await Connection.open(settings.connect, clock, {
      pdu: (pdu) => session.#onPdu(pdu),
      badBody: (id, seq, reason, nackStatus) => session.#onBadBody(id, seq, reason, nackStatus),
      drain: () => handlers.ready(),
      closed: (reason) => session.#onClosed(reason),
    });
    await session.#bind();
    return session;
  }

  get isBound(): boolean {
    return this.#state === 'bound';
  }

  get outstanding(): number {
    return this.#window.outstanding;
  }

  get windowSize(): number {
    return this.#window.size;
  }

  /** True when a submit_sm can be written now: bound, a free slot, and no socket backpressure. */
  get canSubmit(): boolean {
    return this.#state === 'bound' && this.#window.free > 0 && this.#conn.writable;
  }

  /**
   * Writes a submit_sm. Only call when `canSubmit`; returns false (nothing sent) otherwise.
   * Throws SmppdError (PDU_FIELD_INVALID, PDU_MALFORMED), with nothing sent and the window
   * untouched, when the PDU cannot be encoded.
   */
  submit(pdu: Omit<SubmitSmPdu, 'sequenceNumber'>, ctx: T): boolean {
    if (!this.canSubmit) return false;
    const seq = this.#nextSeq();
    const bytes = encodePdu({ ...pdu, sequenceNumber: seq });
    const now = this.clock.now();
    this.#window.offer(seq, ctx, now);
    this.#conn.sendBytes(bytes);
    if (this.#sweep === undefined) this.#scheduleSweep(now + this.settings.responseTimeoutMs);
    return true;
  }

  /** Resolves true once nothing is outstanding, false after `timeoutMs`. */
  waitIdle(timeoutMs: number): Promise<boolean> {
    if (this.#window.outstanding === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = this.clock.setTimer(timeoutMs, () => resolve(false));
      this.#idleWaiters.push(() => { timer.cancel(); resolve(true); });
    });
  }

  /** Sends unbind, waits for unbind_resp up to `timeoutMs`, then closes. */
  async unbind(timeoutMs: number): Promise<void> {
    if (this.#state !== 'bound') {
      this.close('unbind requested');
      return;
    }
    this.#state = 'unbinding';
    const seq = this.#nextSeq();
    await new Promise<void>((resolve) => {
      const timer = this.clock.setTimer(timeoutMs, resolve);
      this.#unbindWaiter = { seq, resolve: () => { timer.cancel(); resolve(); } };
      this.#conn.send({ command: 'unbind', commandStatus: 0, sequenceNumber: seq });
    });
    this.close('unbound');
  }

  close(reason: string): void {
    this.#conn.close(reason);
  }

  // --- binding ---------------------------------------------------------------------------------

  /** Binds (`BindHandshake`), then keeps the link alive. */
  async #bind(): Promise<void> {
    await this.#handshake.run(this.#conn, this.clock, this.settings.responseTimeoutMs);
    this.#state = 'bound';
    this.#keepalive = new Keepalive({
      sendEnquireLink: () => this.#conn.send({ command: 'enquire_link', commandStatus: 0, sequenceNumber: this.#nextSeq() }),
      lastReceivedAt: () => this.#conn.lastReceivedAt(),
      closeDead: (reason) => this.close(reason),
    }, this.clock, this.settings.enquireLinkMs, this.settings.responseTimeoutMs);
    this.#keepalive.start();
  }

  // --- inbound ---------------------------------------------------------------------------------

  #onPdu(pdu: Pdu): void {
    switch (pdu.command) {
      case 'submit_sm_resp':
        this.#settle(pdu.sequenceNumber, { commandStatus: pdu.commandStatus, messageId: pdu.messageId });
        return;
      case 'generic_nack':
        // SMPP v3.4 §4.3: a generic_nack answers the request with the same sequence number. The
        // SMSC could not read what we sent (or does not serve it): worth a line, not one per PDU.
        this.warnings.warn('generic_nack', { event: 'generic_nack_received', sequenceNumber: pdu.sequenceNumber, status: statusName(pdu.commandStatus) },
          'SMSC answered generic_nack');
        if (this.#handshake.answer(pdu.sequenceNumber, pdu.commandStatus || Status.RSYSERR)) return;
        this.#settle(pdu.sequenceNumber, { commandStatus: pdu.commandStatus || Status.RSYSERR, messageId: '' });
        return;
      case 'bind_transceiver_resp':
      case 'bind_transmitter_resp':
      case 'bind_receiver_resp':
        this.#handshake.answer(pdu.sequenceNumber, pdu.commandStatus);
        return;
      case 'enquire_link':
        this.#conn.send({ command: 'enquire_link_resp', commandStatus: 0, sequenceNumber: pdu.sequenceNumber });
        return;
      case 'enquire_link_resp':
        return; // liveness is tracked by Connection.lastReceivedAt
      case 'unbind':
        this.warnings.warn('unbind_received', { event: 'unbind_received' }, 'SMSC sent unbind; closing the session');
        this.#conn.send({ command: 'unbind_resp', commandStatus: 0, sequenceNumber: pdu.sequenceNumber });
        this.#conn.end('unbind from SMSC');
        return;
      case 'unbind_resp':
        if (this.#unbindWaiter?.seq === pdu.sequenceNumber) this.#unbindWaiter.resolve();
        return;
      case 'deliver_sm':
      case 'data_sm':
        this.#onDeliver(pdu);
        return;
      case 'deliver_sm_resp':
      case 'data_sm_resp':
        // We never send deliver_sm or data_sm.
        this.#unexpectedResponse(pdu.command, pdu.sequenceNumber);
        return;
      case 'submit_sm':
      case 'bind_transceiver':
      case 'bind_transmitter':
      case 'bind_receiver':
        // An SMSC does not send these to an ESME (SMPP v3.4 §2.3).
        this.warnings.warn('unexpected_request', { event: 'unexpected_request', command: pdu.command, sequenceNumber: pdu.sequenceNumber },
          'SMSC sent a request an SMSC does not send; answered generic_nack');
        this.#nack(pdu.sequenceNumber, Status.RINVCMDID);
        return;
      case 'other':
        if (isResponseId(pdu.commandId)) {
          this.#unexpectedResponse(pdu.name, pdu.sequenceNumber);
        } else {
          this.warnings.warn('unknown_command', { event: 'unknown_command', command: pdu.name, commandId: hex(pdu.commandId), sequenceNumber: pdu.sequenceNumber },
            'SMSC sent a command we do not serve; answered generic_nack');
          this.#nack(pdu.sequenceNumber, Status.RINVCMDID);
        }
        return;
    }
  }

  #unexpectedResponse(command: string, sequenceNumber: number): void {
    this.warnings.warn('unexpected_response', { event: 'unexpected_response', command, sequenceNumber }, 'response to nothing we sent; ignored');
  }

  #onBadBody(commandId: number, sequenceNumber: number, reason: string, nackStatus: number): void {
    this.warnings.warn('malformed_pdu', { event: 'malformed_pdu', command: commandName(commandId), commandId: hex(commandId), sequenceNumber, reason },
      isResponseId(commandId) ? 'malformed response from SMSC; ignored' : 'malformed PDU from SMSC; answered generic_nack');
    // A broken response cannot be answered; its request will expire and follow the uncertain policy.
    if (!isResponseId(commandId)) this.#nack(sequenceNumber, nackStatus);
  }

  #onDeliver(pdu: DeliverSmPdu | DataSmPdu): void {
    const respond = (status: number): void => {
      if (!this.#conn.isOpen) return;
      this.#conn.send({ command: pdu.command === 'deliver_sm' ? 'deliver_sm_resp' : 'data_sm_resp', commandStatus: status, sequenceNumber: pdu.sequenceNumber, messageId: '' });
    };
    this.handlers.deliver(pdu).then(respond, (e: unknown) => {
      // A temporary error makes the SMSC deliver it again later (SMPP v3.4 §5.1.3). A handler that
      // fails fails for each PDU the SMSC sends: once per interval, not a line per PDU.
      this.warnings.error('deliver_failed', { event: 'deliver_failed', err: (e as Error).message }, 'could not take a deliver_sm; answered with a temporary error');
      respond(Status.RX_T_APPN);
    });
  }

  #settle(seq: number, resp: { commandStatus: number; messageId: string }): void {
    const now = this.clock.now();
    const entry = this.#window.complete(seq);
    if (entry) {
      this.handlers.response(entry.value, { ...resp, latencyMs: now - entry.sentAt });
      this.#afterSlotFreed();
      return;
    }
    const late = this.#late.get(seq);
    if (late) {
      this.#late.delete(seq);
      this.handlers.late(late.ctx, { ...resp, latencyMs: now - late.sentAt });
      return;
    }
    this.warnings.warn('unmatched_response', { event: 'unmatched_response', sequenceNumber: seq }, 'submit_sm_resp or generic_nack for no outstanding request; ignored');
  }

  #afterSlotFreed(): void {
    if (this.#window.outstanding === 0 && this.#idleWaiters.length > 0) {
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const w of waiters) w();
    }
    if (this.#state === 'bound') this.handlers.ready();
  }

  #nack(sequenceNumber: number, status: number): void {
    this.#conn.send({ command: 'generic_nack', commandStatus: status, sequenceNumber });
  }

  // --- expiry ----------------------------------------------------------------------------------

  #scheduleSweep(at: number): void {
    if (at >= this.#sweepAt && this.#sweep) return;
    this.#sweep?.cancel();
    this.#sweepAt = at;
    this.#sweep = this.clock.setTimer(Math.max(0, at - this.clock.now()), () => this.#onSweep());
  }

  #onSweep(): void {
    this.#sweep = undefined;
    this.#sweepAt = Infinity;
    const now = this.clock.now();
    const expired = this.#window.expire(now);
    for (const entry of expired) {
      this.#late.set(entry.sequenceNumber, { ctx: entry.value, sentAt: entry.sentAt, graceUntil: now + this.settings.responseTimeoutMs });
      this.handlers.uncertain(entry.value, 'timeout');
    }
    let nextLate = Infinity;
    for (const [seq, late] of this.#late) {
      if (late.graceUntil <= now) {
        this.#late.delete(seq);
        this.handlers.lateExpired(late.ctx);
      } else {
        nextLate = Math.min(nextLate, late.graceUntil);
      }
    }
    if (expired.length > 0) this.#afterSlotFreed();
    const next = Math.min(this.#window.nextExpiry() ?? Infinity, nextLate);
    if (next !== Infinity && this.#state !== 'closed') this.#scheduleSweep(next);
  }

  // --- teardown --------------------------------------------------------------------------------

  #onClosed(reason: string): void {
    const wasBound = this.#state === 'bound' || this.#state === 'unbinding';
    this.#state = 'closed';
    this.#keepalive?.stop();
    this.#sweep?.cancel();
    this.#sweep = undefined;
    this.#handshake.linkClosed(reason);
    this.#unbindWaiter?.resolve();
    for (const entry of this.#window.clear()) this.handlers.uncertain(entry.value, 'connection_lost');
    for (const late of this.#late.values()) this.handlers.lateExpired(late.ctx);
    this.#late.clear();
    for (const w of this.#idleWaiters) w();
    this.#idleWaiters = [];
    if (wasBound) this.handlers.closed(reason);
  }

  #nextSeq(): number {
    // SMPP v3.4 §5.1.4: 0x00000001–0x7FFFFFFF.
    this.#seq = this.#seq >= 0x7fffffff ? 1 : this.#seq + 1;
    return this.#seq;
  }
}

function hex(commandId: number): string {
  return `0x${commandId.toString(16).padStart(8, '0')}`;
}
