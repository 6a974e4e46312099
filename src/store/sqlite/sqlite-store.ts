/**
 * The embedded store: one SQLite file in WAL mode (DESIGN.md, "Every arrow that crosses the store
 * is durable"). Writes go through the group commit (`group-commit.ts`) and resolve after their
 * transaction has committed; reads run at once on the same connection, so they see every write
 * whose promise has resolved. SQL and better-sqlite3 stay in this folder: the other layers see
 * `Store`.
 */
import Database from 'better-sqlite3';
import type { Clock } from '../../core/clock.js';
import { ErrorCode, SmppdError } from '../../core/errors.js';
import { asStoreError } from '../store-error.js';
import type { Batch, BatchState, Schedule } from '../batches.js';
import type { ClaimedMessage, ClaimShares, PartResult, TurnsReleased } from '../claims.js';
import type { DeadEvent, ResendFilter, ResentDeadEvents } from '../event-resends.js';
import type { IdempotencyKeyRef, IdempotencyRecord, IdempotentResponse } from '../idempotency.js';
import type { ExpiredInbound, InboundPartOutcome, InboundPartRecord, InboundRecord } from '../inbound.js';
import type { Accepted, AcceptRequest, QueueDepth } from '../intake.js';
import type { MessageRecord } from '../message-records.js';
import type { EventOutcome, OutboxDepth, OutboxEvent, SettledEvents } from '../outbox.js';
import type { ParkedDropped, ParkingLimit, ReceiptApplied, ReceiptRecord } from '../receipts.js';
import type { FoundMessages, MessageQuery, MessageStory } from '../message-search.js';
import type { MessageMove, MovableMessage } from '../rerouting.js';
import type { PruneCounts, PruneCursor } from '../retention.js';
import type { MessageView, StoreCounts } from '../status-reads.js';
import type { Store } from '../store.js';
import type { UpstreamSuspension } from '../upstream-suspensions.js';
import { accept } from './accept.js';
import { findMessages, listSuspensions, messageStory, queuedByUpstream, resumeUpstream, suspendUpstream } from './admin.js';
import { releaseTurns } from './batch-turns.js';
import { getBatch, listBatches, listSchedules, releaseDue, setBatchState, setScheduleState } from './batches.js';
import { claim, readySince } from './claim.js';
import {
  claimEvents, listDeadEvents, outboxDepth, releaseLeases, resendDeadEvents, resendStatusEvents, settleEvents,
} from './event-delivery.js';
import { GroupCommit, type GroupCommitStats } from './group-commit.js';
import { findKey, finishKey, pruneKeys, releasePendingKeys } from './idempotency.js';
import { expireInboundParts, recordInboundPart } from './inbound-parts.js';
import { dropRecords, pendingRecords, takeRecords } from './message-records.js';
import { migrate } from './migrate.js';
import { recordInbound } from './outbox.js';
import { counts, getMessage, messageTimes, queueDepth, type MessageTimes } from './reads.js';
import { applyReceipt, pruneParked } from './receipts.js';
import { move, movable } from './rerouting.js';
import { pruneFinished } from './retention.js';
import { Sql, type SqlMemory } from './sql.js';
import { expire, recordSubmit, recoverInflight } from './submit.js';

export interface SqliteStoreOptions {
  /** The database file, created when missing (its -wal and -shm files live beside it). */
  path: string;
  /**
   * false (default): `synchronous = NORMAL`: a committed write survives the process being killed
   * (kill -9), not a power loss. true: `synchronous = FULL`: every commit is fsynced, and survives
   * a power loss too, at the cost of one fsync per group commit.
   */
  fsync?: boolean;
  /** Milliseconds a write waits for others to share its transaction. Default 2. */
  commitWindowMs?: number;
  /** Writes that commit at once without waiting for the window. Default 1000. */
  maxBatch?: number;
  /** Milliseconds to wait for a lock held by another connection (an operator's sqlite3 shell). Default 5000. */
  busyTimeoutMs?: number;
  /** What the connection keeps in memory of its rows (`sql.ts`); the defaults suit the daemon, tests turn it off to compare. */
  memory?: SqlMemory;
  /** Whether a message that becomes final queues its record (`MessageRecords`, `records.path`). Default false: none is queued. */
  records?: boolean;
  /** Drives the group-commit timer; the store reads no time from it except for the migrations' applied_at. */
  clock: Clock;
}

export class SqliteStore implements Store {
  readonly #db: Database.Database;
  readonly #sql: Sql;
  readonly #writes: GroupCommit;
  #closed = false;

  private constructor(db: Database.Database, sql: Sql, writes: GroupCommit) {
    this.#db = db;
    this.#sql = sql;
    this.#writes = writes;
  }

  /** Opens (or creates) the file, sets it up and brings its schema up to date. */
  static async open(options: SqliteStoreOptions): Promise<SqliteStore> {
    let db: Database.Database;
    try {
      db = new Database(options.path);
    } catch (e) {
      throw new SmppdError(ErrorCode.INTERNAL, `cannot open the store at ${options.path}: ${(e as Error).message}`, { path: options.path }, { cause: e });
    }
    try {
      configure(db, options);
      migrate(db, options.clock.wallNow());
      // One process uses the file at a time: leases left in it belong to a process that is gone.
      const setUp = new Sql(db);
      releaseLeases(setUp, options.clock.wallNow());
      releasePendingKeys(setUp);
    } catch (e) {
      db.close();
      throw asStoreError(e, `cannot set up the store at ${options.path}`);
    }
    const sql = new Sql(db, options.memory, options.records === true);
    const writes = new GroupCommit(db, {
      clock: options.clock,
      windowMs: options.commitWindowMs ?? 2,
      maxBatch: options.maxBatch ?? 1000,
      onRollback: () => sql.rolledBack(),
    });
    return new SqliteStore(db, sql, writes);
  }

  /** Commits so far, and the queue: for metrics, and for tests that check writes are grouped. */
  get stats(): GroupCommitStats {
    return this.#writes.stats;
  }

  /** What the memory of status rows holds and how often it answered (`status-cache.ts`): for tests. */
  get statusCache(): { size: number; hits: number; misses: number } {
    return { size: this.#sql.statuses.size, ...this.#sql.statuses.lookups };
  }

  /** The connection's settings as SQLite reports them: for the startup log and check-config. */
  settings(): { journalMode: string; synchronous: 'OFF' | 'NORMAL' | 'FULL' | 'EXTRA'; foreignKeys: boolean; busyTimeoutMs: number } {
    const synchronous = (['OFF', 'NORMAL', 'FULL', 'EXTRA'] as const)[Number(this.#db.pragma('synchronous', { simple: true }))] ?? 'OFF';
    return {
      journalMode: String(this.#db.pragma('journal_mode', { simple: true })),
      synchronous,
      foreignKeys: Number(this.#db.pragma('foreign_keys', { simple: true })) === 1,
      busyTimeoutMs: Number(this.#db.pragma('busy_timeout', { simple: true })),
    };
  }

  accept(request: AcceptRequest): Promise<Accepted> {
    return this.#writes.run(() => accept(this.#sql, request));
  }

  claim(upstream: string, now: number, take: number | ClaimShares): Promise<ClaimedMessage[]> {
    // First in its batch: the binds wait for it, and the rest of the batch (a bulk upload's
    // chunk of accepts, a thousand receipts) may take a while.
    return this.#writes.run(() => claim(this.#sql, upstream, now, take), 'first');
  }

  recordSubmit(messageId: string, results: PartResult[], now: number): Promise<void> {
    // First in its batch: a receipt committed with it then finds the part's new SMSC id.
    return this.#writes.run(() => recordSubmit(this.#sql, messageId, results, now), 'first');
  }

  applyReceipt(receipt: ReceiptRecord): Promise<ReceiptApplied> {
    return this.#writes.run(() => applyReceipt(this.#sql, receipt));
  }

  recordInbound(inbound: InboundRecord): Promise<void> {
    return this.#writes.run(() => { recordInbound(this.#sql, inbound); });
  }

  recordInboundPart(part: InboundPartRecord): Promise<InboundPartOutcome> {
    return this.#writes.run(() => recordInboundPart(this.#sql, part));
  }

  expireInboundParts(before: number, limit: number): Promise<ExpiredInbound[]> {
    return this.#writes.run(() => expireInboundParts(this.#sql, before, limit));
  }

  recoverInflight(policies: Readonly<Record<string, 'resend' | 'fail'>>, now: number): Promise<number> {
    return this.#writes.run(() => recoverInflight(this.#sql, policies, now));
  }

  /** One process uses the file: no other instance can leave parts behind. */
  recoverAbandoned(_policies: Readonly<Record<string, 'resend' | 'fail'>>, _now: number): Promise<number> {
    return Promise.resolve(0);
  }

  expire(now: number): Promise<number> {
    return this.#writes.run(() => expire(this.#sql, now));
  }

  pruneParked(limits: readonly ParkingLimit[], otherBefore: number): Promise<ParkedDropped[]> {
    return this.#writes.run(() => pruneParked(this.#sql, limits, otherBefore));
  }

  movable(upstream: string, limit: number, now: number, after?: number): Promise<MovableMessage[]> {
    return this.#read(() => movable(this.#sql, upstream, limit, now, after));
  }

  move(moves: readonly MessageMove[], now: number): Promise<string[]> {
    return this.#writes.run(() => move(this.#sql, moves, now));
  }

  pruneFinished(before: number, limit: number, after?: PruneCursor | null): Promise<PruneCounts> {
    return this.#writes.run(() => pruneFinished(this.#sql, before, limit, after));
  }

  findIdempotencyKey(ref: IdempotencyKeyRef, now: number): Promise<IdempotencyRecord | undefined> {
    return this.#read(() => findKey(this.#sql, ref, now));
  }

  finishIdempotencyKey(ref: IdempotencyKeyRef, response: IdempotentResponse, _now: number): Promise<boolean> {
    return this.#writes.run(() => finishKey(this.#sql, ref, response));
  }

  pruneIdempotencyKeys(now: number, limit: number): Promise<number> {
    return this.#writes.run(() => pruneKeys(this.#sql, now, limit));
  }

  getMessage(messageId: string): Promise<MessageView | undefined> {
    return this.#read(() => getMessage(this.#sql, messageId));
  }

  listBatches(client: string): Promise<Batch[]> {
    return this.#read(() => listBatches(this.#sql, client));
  }

  getBatch(client: string, batchId: number): Promise<Batch | undefined> {
    return this.#read(() => getBatch(this.#sql, client, batchId));
  }

  setBatchState(client: string, batchId: number, state: BatchState, now: number): Promise<Batch | undefined> {
    return this.#writes.run(() => setBatchState(this.#sql, client, batchId, state, now));
  }

  listSchedules(client: string): Promise<Schedule[]> {
    return this.#read(() => listSchedules(this.#sql, client));
  }

  setScheduleState(client: string, scheduleId: number, state: 'released' | 'cancelled', now: number): Promise<Schedule | undefined> {
    return this.#writes.run(() => setScheduleState(this.#sql, client, scheduleId, state, now));
  }

  releaseDue(now: number): Promise<number> {
    return this.#writes.run(() => releaseDue(this.#sql, now));
  }

  releaseTurns(now: number): Promise<TurnsReleased> {
    return this.#writes.run(() => releaseTurns(this.#sql, now));
  }

  counts(): Promise<StoreCounts> {
    return this.#read(() => counts(this.#sql));
  }

  queueDepth(): Promise<QueueDepth> {
    return this.#read(() => queueDepth(this.#sql));
  }

  /** Every message's status and times (the benchmark's read of a store it filled; not in `Store`). */
  messageTimes(): Promise<MessageTimes[]> {
    return this.#read(() => messageTimes(this.#sql));
  }

  readySince(upstream: string, now: number): Promise<number | null> {
    return this.#read(() => readySince(this.#sql, upstream, now));
  }

  claimEvents(client: string, now: number, limit: number, leaseUntil: number): Promise<OutboxEvent[]> {
    return this.#writes.run(() => claimEvents(this.#sql, client, now, limit, leaseUntil));
  }

  settleEvents(outcomes: EventOutcome[], now: number): Promise<SettledEvents> {
    return this.#writes.run(() => settleEvents(this.#sql, outcomes, now));
  }

  listDeadEvents(client: string, limit: number, afterId?: number): Promise<DeadEvent[]> {
    return this.#read(() => listDeadEvents(this.#sql, client, limit, afterId));
  }

  resendDeadEvents(client: string, ids: number[] | null, now: number): Promise<ResentDeadEvents> {
    return this.#writes.run(() => resendDeadEvents(this.#sql, client, ids, now));
  }

  resendStatusEvents(filter: ResendFilter, afterSeq: number, limit: number, now: number): Promise<{ queued: number; next: number | null }> {
    return this.#writes.run(() => resendStatusEvents(this.#sql, filter, afterSeq, limit, now));
  }

  outboxDepth(): Promise<OutboxDepth[]> {
    return this.#read(() => outboxDepth(this.#sql));
  }

  queuedByUpstream(): Promise<Array<{ upstream: string; queued: number }>> {
    return this.#read(() => queuedByUpstream(this.#sql));
  }

  listSuspensions(): Promise<UpstreamSuspension[]> {
    return this.#read(() => listSuspensions(this.#sql));
  }

  suspendUpstream(s: UpstreamSuspension): Promise<UpstreamSuspension> {
    return this.#writes.run(() => suspendUpstream(this.#sql, s));
  }

  resumeUpstream(upstream: string): Promise<boolean> {
    return this.#writes.run(() => resumeUpstream(this.#sql, upstream));
  }

  findMessages(query: MessageQuery): Promise<FoundMessages> {
    return this.#read(() => findMessages(this.#sql, query));
  }

  messageStory(messageId: string): Promise<MessageStory | undefined> {
    return this.#read(() => messageStory(this.#sql, messageId));
  }

  /** One process uses the file: no claim, the writer takes one batch at a time. */
  takeRecords(limit: number, _now: number): Promise<MessageRecord[]> {
    return this.#read(() => takeRecords(this.#sql, limit));
  }

  dropRecords(seqs: readonly number[]): Promise<number> {
    return this.#writes.run(() => dropRecords(this.#sql, seqs));
  }

  pendingRecords(): Promise<number> {
    return this.#read(() => pendingRecords(this.#sql));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#writes.close();
    this.#db.close();
  }

  #read<T>(fn: () => T): Promise<T> {
    if (this.#closed) return Promise.reject(new SmppdError(ErrorCode.INTERNAL, 'the store is closed'));
    try {
      return Promise.resolve(fn());
    } catch (e) {
      return Promise.reject(asStoreError(e, 'a store read failed'));
    }
  }
}

function configure(db: Database.Database, options: SqliteStoreOptions): void {
  const mode = db.pragma('journal_mode = WAL', { simple: true });
  if (mode !== 'wal' && !db.memory) {
    throw new SmppdError(ErrorCode.INTERNAL, `the store needs WAL mode; SQLite answered journal_mode=${String(mode)}`);
  }
  db.pragma(`synchronous = ${options.fsync === true ? 'FULL' : 'NORMAL'}`);
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
  db.pragma('foreign_keys = ON');
  // 64 MiB of page cache instead of SQLite's 2 MiB: the indexes of a busy store outgrow 2 MiB
  // within minutes, and every claim and receipt lookup then reads pages back from the OS.
  db.pragma('cache_size = -65536');
}
