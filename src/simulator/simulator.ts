import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import type { Clock } from '../core/clock.js';
import { ErrorCode, SmppdError } from '../core/errors.js';
import type { Log } from '../core/log.js';
import type { BindPdu, SubmitSmPdu, Tlvs } from '../smpp/pdu.js';
import { compileBehaviour, defaultBehaviour, mergeBehaviour, type BehaviourPatch, type CompiledBehaviour, type SimulatorBehaviour } from './behaviour.js';
import { SimStatus, statusName } from './command-status.js';
import { SimConnection, type ConnectionHost } from './connection.js';
import { BindCounters, bump, sumCounters, type BindMode, type SimulatorCounters } from './counters.js';
import { MessageIdSource } from './message-id.js';
import type { MoMessage, RecordedSubmit, SimulatorAccount, SimulatorOptions } from './options.js';
import { RateTracker } from '../core/rate-tracker.js';
import { ReceiptRouter, type ReceiptOrigin, type ReceiptRouting, type RoutingChoice } from './receipt-routing.js';
import { ReceiptDesk, type ReceiptJob, type ReceiptTarget } from './receipts.js';
import { StatusServer } from './status-server.js';
import { SubmitThrottle } from './submit-checks.js';

/**
 * The built-in SMSC: a real SMPP v3.4 server for demos, tests and the benchmark. Accounts,
 * binds and behaviour (delays, throttling, status mixes, receipts, faults) are all settable;
 * counters say what the SMSC saw, which is what tests assert on.
 */
export class SmscSimulator {
  readonly #options: SimulatorOptions;
  readonly #clock: Clock;
  readonly #log: Log;
  readonly #random: () => number;
  readonly #accounts: Map<string, SimulatorAccount>;
  readonly #ids: MessageIdSource;
  readonly #receipts: ReceiptDesk;
  readonly #host: ConnectionHost;
  readonly #connections = new Set<SimConnection>();
  /** Bound connections per account. */
  readonly #bound = new Map<string, Set<SimConnection>>();
  readonly #countersOf = new Map<SimConnection, BindCounters>();
  /** The per-account rate limit, by system_id: one bucket shared by all of an account's binds. */
  readonly #accountThrottles = new Map<string, SubmitThrottle>();
  readonly #router = new ReceiptRouter();
  #compiled: CompiledBehaviour;
  #server: Server | undefined;
  #status: StatusServer | undefined;
  #stopping = false;
  #startedAt: number | null = null;
  #bindSeq = 0;
  #moRr = 0;
  // Counters that belong to no bind.
  #binds: BindCounters[] = [];
  #unbound: BindCounters;
  #globalRate = new RateTracker();
  #connectionsAccepted = 0;
  #bindsRejected: Record<string, number> = {};
  #recorded: RecordedSubmit[] = [];

  constructor(options: SimulatorOptions, clock: Clock, log: Log) {
    this.#options = options;
    this.#clock = clock;
    this.#log = log;
    this.#random = options.random ?? Math.random;
    this.#accounts = new Map(options.accounts.map((a) => [a.systemId, a]));
    this.#compiled = compileBehaviour(mergeBehaviour(defaultBehaviour(), options.behaviour ?? {}), 0);
    this.#ids = new MessageIdSource(this.#random);
    this.#unbound = new BindCounters(0, '', 'transceiver', '', clock.wallNow());
    this.#receipts = new ReceiptDesk(clock, { pickReceiver: (s, p, r) => this.#pickReceiver(s, p, r) }, () => this.#compiled, this.#random);
    this.#host = this.#makeHost();
  }

  /** Listens; resolves with the port (useful with port 0). */
  async start(): Promise<{ port: number }> {
    if (this.#server) throw new SmppdError(ErrorCode.INTERNAL, 'simulator already started');
    this.#stopping = false;
    this.#ids.newPrefix(this.#random);
    this.#resetAccountThrottles(); // a restarted SMSC has forgotten what the accounts sent
    const tls = this.#options.tls;
    let server: Server;
    if (tls) {
      server = createTlsServer({ cert: tls.cert, key: tls.key, ca: tls.ca, requestCert: tls.requestCert ?? false, rejectUnauthorized: tls.requestCert ?? false });
      server.on('secureConnection', (socket: Socket) => this.#accept(socket));
      server.on('tlsClientError', (e: Error) => this.#log.debug({ event: 'sim_tls_error', err: e.message }, 'TLS handshake failed'));
    } else {
      server = createTcpServer((socket) => this.#accept(socket));
    }
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#options.port, this.#options.host ?? '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.#server = server;
    server.on('error', (e) => this.#log.error({ event: 'sim_server_error', err: e.message }, 'simulator server error'));
    this.#startedAt = this.#clock.wallNow();
    return { port: (server.address() as AddressInfo).port };
  }

  /** Closes every connection, the listener and the status endpoint. Idempotent. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#receipts.clear();
    const server = this.#server;
    this.#server = undefined;
    this.dropConnections();
    await Promise.all([
      server ? new Promise<void>((resolve) => server.close(() => resolve())) : undefined,
      this.#status?.stop(),
    ]);
    this.#status = undefined;
  }

  /** Starts the HTTP status endpoint (GET /status, POST /behaviour, /drop, /reset); loopback by default. */
  async startStatusServer(port: number, host = '127.0.0.1'): Promise<{ port: number }> {
    if (this.#status) throw new SmppdError(ErrorCode.INTERNAL, 'status server already started');
    const status = new StatusServer(this);
    this.#status = status;
    return status.start(port, host);
  }

  behaviour(): SimulatorBehaviour {
    return structuredClone(this.#compiled.spec);
  }

  /** Changes behaviour at runtime; throws SmppdError(CONFIG_INVALID) and changes nothing when invalid. */
  setBehaviour(patch: BehaviourPatch): void {
    this.#compiled = compileBehaviour(mergeBehaviour(this.#compiled.spec, patch), this.#compiled.version + 1);
  }

  /** Destroys every connection, bound or not (the SMSC dropping its links). Returns how many. */
  dropConnections(): number {
    const all = [...this.#connections];
    for (const conn of all) conn.destroy();
    return all.length;
  }

  /** Writes raw bytes to every bound connection (malformed-PDU tests). Returns how many. */
  injectRaw(bytes: Buffer): number {
    let n = 0;
    for (const conn of this.#connections) {
      if (!conn.mode) continue;
      conn.writeRaw(bytes);
      n++;
    }
    return n;
  }

  /** Sends a mobile-originated deliver_sm to a receiving bind (round-robin); undefined when none is bound. */
  sendMo(mo: MoMessage): { bindId: number; sequenceNumber: number } | undefined {
    const receivers: SimConnection[] = [];
    for (const [systemId, set] of this.#bound) {
      if (mo.systemId !== undefined && systemId !== mo.systemId) continue;
      for (const conn of set) if (conn.canReceive) receivers.push(conn);
    }
    if (receivers.length === 0) return undefined;
    const conn = receivers[this.#moRr++ % receivers.length]!;
    const sequenceNumber = conn.sendMo({
      command: 'deliver_sm', commandStatus: 0, serviceType: '',
      sourceAddrTon: 1, sourceAddrNpi: 1, sourceAddr: mo.source,
      destAddrTon: 0, destAddrNpi: 0, destinationAddr: mo.destination,
      esmClass: mo.esmClass ?? 0, protocolId: 0, priorityFlag: 0, scheduleDeliveryTime: '', validityPeriod: '',
      registeredDelivery: 0, replaceIfPresentFlag: 0, dataCoding: mo.dataCoding, smDefaultMsgId: 0,
      shortMessage: mo.shortMessage, tlvs: mo.tlvs,
    });
    return { bindId: conn.bindId, sequenceNumber };
  }

  /** Every submit_sm received since start or reset (empty unless `record: true`). */
  recordedSubmits(): RecordedSubmit[] {
    return [...this.#recorded];
  }

  /** A JSON-able snapshot of what the SMSC saw. */
  counters(): SimulatorCounters {
    const bindsRejected = Object.values(this.#bindsRejected).reduce((a, b) => a + b, 0);
    const totals = {
      ...sumCounters([...this.#binds.map((b) => b.values()), this.#unbound.values()]),
      maxSubmitsPerSecond: this.#globalRate.max,
      connectionsAccepted: this.#connectionsAccepted,
      bindsRejected,
    };
    let bindsActive = 0;
    for (const set of this.#bound.values()) bindsActive += set.size;
    return {
      startedAt: this.#startedAt === null ? null : new Date(this.#startedAt).toISOString(),
      connectionsAccepted: this.#connectionsAccepted,
      connectionsOpen: this.#connections.size,
      bindsActive,
      bindsRejected,
      bindsRejectedByStatus: { ...this.#bindsRejected },
      receiptsWaitingForReceiver: this.#receipts.waitingForReceiver,
      totals,
      binds: this.#binds.map((b) => b.snapshot()),
    };
  }

  /**
   * Zeroes every count, forgets closed binds and recorded submits, and gives every account's
   * throttle a full burst again; gauges (outstanding, pending) and per-bind throttles stay.
   */
  resetCounters(): void {
    this.#resetAccountThrottles();
    this.#binds = this.#binds.filter((b) => b.closedAt === null);
    for (const b of this.#binds) b.reset();
    this.#unbound.reset();
    this.#globalRate.reset();
    this.#connectionsAccepted = 0;
    this.#bindsRejected = {};
    this.#recorded = [];
  }

  #accept(socket: Socket): void {
    if (this.#stopping) {
      socket.destroy();
      return;
    }
    this.#connectionsAccepted++;
    this.#connections.add(new SimConnection(socket, this.#host));
  }

  #pickReceiver(systemId: string, origin: ReceiptOrigin, routing: ReceiptRouting): RoutingChoice<ReceiptTarget> | undefined {
    const set = this.#bound.get(systemId);
    return set ? this.#router.pick(systemId, set, origin, routing) : undefined;
  }

  #authorise(pdu: BindPdu): number {
    const account = this.#accounts.get(pdu.systemId);
    if (!account) return SimStatus.ESME_RINVSYSID;
    if (account.password !== pdu.password) return SimStatus.ESME_RINVPASWD;
    const active = this.#bound.get(pdu.systemId)?.size ?? 0;
    if (account.maxBinds !== undefined && active >= account.maxBinds) return SimStatus.ESME_RALYBND;
    return 0;
  }

  #onBound(conn: SimConnection, systemId: string, systemType: string, mode: BindMode): BindCounters {
    const counters = new BindCounters(++this.#bindSeq, systemId, mode, conn.remoteAddress, this.#clock.wallNow(), systemType);
    this.#binds.push(counters);
    this.#countersOf.set(conn, counters);
    let set = this.#bound.get(systemId);
    if (!set) this.#bound.set(systemId, (set = new Set()));
    set.add(conn);
    this.#log.info({ event: 'sim_bound', bindId: counters.bindId, systemId, systemType, mode, remote: conn.remoteAddress }, 'ESME bound');
    if (conn.canReceive) this.#receipts.receiverBound(systemId);
    return counters;
  }

  #accountThrottle(systemId: string): SubmitThrottle {
    let throttle = this.#accountThrottles.get(systemId);
    if (!throttle) this.#accountThrottles.set(systemId, (throttle = new SubmitThrottle('account')));
    return throttle;
  }

  #resetAccountThrottles(): void {
    for (const throttle of this.#accountThrottles.values()) throttle.reset();
  }

  #onUnbound(conn: SimConnection, unanswered: ReceiptJob[]): void {
    this.#bound.get(conn.systemId)?.delete(conn);
    if (!this.#stopping && unanswered.length > 0) this.#receipts.requeue(unanswered);
  }

  #onClosed(conn: SimConnection): void {
    this.#connections.delete(conn);
    const counters = this.#countersOf.get(conn);
    this.#countersOf.delete(conn);
    if (counters) {
      counters.closedAt = this.#clock.wallNow();
      this.#log.info({ event: 'sim_closed', bindId: counters.bindId, systemId: counters.systemId }, 'ESME connection closed');
    }
  }

  #record(bindId: number, pdu: SubmitSmPdu, messageId: string): void {
    if (!this.#options.record) return;
    this.#recorded.push({
      bindId, sequenceNumber: pdu.sequenceNumber, serviceType: pdu.serviceType,
      sourceAddrTon: pdu.sourceAddrTon, sourceAddrNpi: pdu.sourceAddrNpi, sourceAddr: pdu.sourceAddr,
      destAddrTon: pdu.destAddrTon, destAddrNpi: pdu.destAddrNpi, destinationAddr: pdu.destinationAddr,
      dataCoding: pdu.dataCoding, esmClass: pdu.esmClass, shortMessage: pdu.shortMessage, registeredDelivery: pdu.registeredDelivery,
      scheduleDeliveryTime: pdu.scheduleDeliveryTime, validityPeriod: pdu.validityPeriod, messageId, tlvs: recordedTlvs(pdu.tlvs),
    });
  }

  #makeHost(): ConnectionHost {
    return {
      clock: this.#clock,
      log: this.#log,
      random: this.#random,
      receipts: this.#receipts,
      unboundCounters: this.#unbound,
      behaviour: () => this.#compiled,
      authorise: (pdu) => this.#authorise(pdu),
      bindRejected: (status) => bump(this.#bindsRejected, statusName(status)),
      bound: (conn, systemId, systemType, mode) => this.#onBound(conn, systemId, systemType, mode),
      accountThrottle: (systemId) => this.#accountThrottle(systemId),
      unbound: (conn, unanswered) => this.#onUnbound(conn, unanswered),
      closed: (conn) => this.#onClosed(conn),
      submitReceived: (now) => this.#globalRate.record(now),
      nextMessageId: () => this.#ids.next(this.#compiled.spec.messageIdFormat),
      record: (bindId, pdu, messageId) => this.#record(bindId, pdu, messageId),
    };
  }
}

/**
 * The optional parameters of a recorded submit_sm, vendor ones (`other`) with their tags and
 * values: each value copied, since the decoder's is a view into the frame, and a record must not
 * keep the socket's whole chunk alive.
 */
function recordedTlvs(tlvs: Tlvs | undefined): Tlvs | undefined {
  if (tlvs?.other === undefined) return tlvs;
  return { ...tlvs, other: tlvs.other.map((t) => ({ tag: t.tag, value: Buffer.from(t.value) })) };
}
