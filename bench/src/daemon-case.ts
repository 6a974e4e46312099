/** The daemon benchmark's cases and what each reports; `daemon.ts` runs them. */

export interface DaemonCase {
  name: string;
  kind: 'ingest' | 'bulk' | 'e2e' | 'stream';
  binds: number;
  ratePerBind: number;
  /** Measured seconds of load (ingest, e2e). */
  seconds: number;
  /** Keep-alive connections (stream: uploads unanswered at most). */
  concurrency: number;
  /** e2e: sendSms per second offered (open loop); stream: numbers per second. */
  offeredRate?: number;
  /** bulk: numbers in the file; stream: in each upload. */
  numbers?: number;
  /** bulk: with receipts, measured until every valid number is DELIVERED, not only stored. */
  untilDelivered?: boolean;
  /** bulk: the text sent, and the parts it makes (the SMSC sends a receipt per part); by default a one-part code. */
  text?: { message: string; parts: number };
}

export interface DaemonCaseResult {
  case: string;
  transport: 'tcp';
  binds: number;
  ratePerBind: number;
  /** How the load was made, in words. */
  load: string;
  seconds: number;
  /** 1-minute load average of the machine when the case started (other work shares the cores). */
  loadAverage: number;
  offered: number;
  /** Messages the daemon answered 200 for (bulk: validCount). */
  accepted: number;
  /** accepted per second of the measured part (bulk: numbers per second to the answer). */
  acceptedPerSecond: number;
  refused: Record<string, number>;
  errors: number;
  skipped: number;
  httpP50Ms: number;
  httpP99Ms: number;
  httpMaxMs: number;
  bulk?: { status: number; responseMs: number; total: number; validCount: number; invalidCount: number; duplicate: number; bulkSessionId: string | null };
  /** submit_sm the simulator received per second while the load ran. */
  smscSubmitsPerSecond: number;
  /** The most submit_sm any one bind had outstanding at the simulator. */
  smscMaxOutstandingPerBind: number;
  e2e?: E2eFigures;
  /** The daemon's CPU over the measured part (e2e: until the last DELIVERED) per accepted message. */
  daemonCpuUsPerMessage: number;
  /** Cases 1 and 3: the load generator's CPU (the bench process while the load ran) per request offered, µs. */
  generatorCpuUsPerRequest?: number;
  /**
   * CPU over the measured part, % of one core: each process, the whole machine (2 cores: 200),
   * and the time the daemon's main thread was ready to run but waited for a core.
   */
  cpuPercent: { daemon: number; simulator: number; bench: number; machine: number; daemonWaiting: number };
  daemonPeakRssMb: number;
  daemonExitCode: number | null;
  /** warn/error lines the daemon logged before the SIGTERM, and while it stopped. */
  daemonWarnings: number;
  daemonWarningsWhileStopping: number;
  firstWarnings: string[];
}

export interface E2eFigures {
  delivered: number;
  /** Messages not DELIVERED when the case gave up waiting, by status. */
  notDelivered: Record<string, number>;
  /** DELIVERED messages over the time from the first accept to the last DELIVERED. */
  deliveredPerSecond: number;
  /**
   * sendbulk: receipts acknowledged in each whole second from the start of the upload, and the
   * median and lowest of them without the first and the last second (the binds' start, the tail).
   */
  perSecond?: { samples: number[]; median: number; min: number };
  /** Seconds from the end of the load to the last DELIVERED. */
  drainSeconds: number;
  /** null in the sendbulk case: the bench does not know the ids a bulk upload made. */
  acceptToDeliveredP50Ms: number | null;
  acceptToDeliveredP99Ms: number | null;
  acceptToDeliveredMaxMs: number | null;
  /** GET /sms/status/:id on a sample of ids while the daemon ran: DELIVERED / asked. */
  statusSample: string;
}

export type Measured = Omit<DaemonCaseResult, 'loadAverage' | 'daemonExitCode' | 'daemonWarnings' | 'daemonWarningsWhileStopping' | 'firstWarnings'> & { ids: string[]; e2eRun?: E2eRun };

export interface E2eRun {
  loadEndedAt: number;
  lastDeliveredAt: number;
  statusSample: string;
}
