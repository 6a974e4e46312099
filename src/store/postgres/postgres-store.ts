/**
 * The shared store: the `Store` interface on PostgreSQL, so several smppd processes on
 * different hosts share one queue of parts, one receipt-matching index and one outbox. The same
 * semantics as the SQLite store (`../sqlite/`), which stays the default for one host; what
 * several instances add is said where it happens:
 *
 * - claims: `claim.ts` (FOR UPDATE SKIP LOCKED, a claim per instance with a lease), and
 *   `accept.ts` for a send the dispatcher takes straight from its accept (`claimsOnAccept`);
 * - inflight parts of an instance that is gone: `submit.ts` (`recoverInflight`, `recoverAbandoned`), the leases
 *   a running instance renews so that it is never taken for gone (`renewLeases`), and `liveInstances`;
 * - receipts and submit outcomes on different instances: `receipts.ts` (advisory locks per key);
 * - the parts of one MO message on different instances: `inbound-parts.ts` (an advisory lock per message);
 * - batch counters and state changes: `db.ts`, `batches.ts`;
 * - the outbox: `event-delivery.ts` (SKIP LOCKED, the head-of-message rule across instances);
 * - the record queue: `message-records.ts` (each record claimed by one instance, with a lease).
 *
 * Each write is one transaction on a pooled connection (a claim, an event claim: one statement),
 * committed before its promise resolves. The writes of every message — accepts of single
 * messages, submit outcomes, receipts — are group-committed (`write-batcher.ts`): concurrent
 * ones share a transaction whose statements carry them all; submit outcomes and receipts share
 * theirs (`status-writes.ts`), so a receipt that comes soon after its submit_sm_resp is often
 * written with its outcome. pg stays in this folder: the other layers see `Store`.
 */
import pg from 'pg';
import { SystemClock } from '../../core/clock.js';
import { ErrorCode, SmppdError } from '../../core/errors.js';
import type { Batch, BatchState, Schedule } from '../batches.js';
import type { ClaimedMessage, ClaimShares, PartResult, TurnsReleased } from '../claims.js';
import type { DeadEvent, ResendFilter, ResentDeadEvents } from '../event-resends.js';
import type { IdempotencyKeyRef, IdempotencyRecord, IdempotentResponse } from '../idempotency.js';
import type { ExpiredInbound, InboundPartOutcome, InboundPartRecord, InboundRecord } from '../inbound.js';
import type { Accepted, AcceptRequest, QueueDepth } from '../intake.js';
import type { MessageRecord } from '../message-records.js';
import type { FoundMessages, MessageQuery, MessageStory } from '../message-search.js';
import type { EventOutcome, OutboxDepth, OutboxEvent, SettledEvents } from '../outbox.js';
import type { ParkedDropped, ParkingLimit, ReceiptApplied, ReceiptRecord } from '../receipts.js';
import type { MessageMove, MovableMessage } from '../rerouting.js';
import type { PruneCounts, PruneCursor } from '../retention.js';
import type { MessageView, StoreCounts } from '../status-reads.js';
import type { Store } from '../store.js';
import type { UpstreamSuspension } from '../upstream-suspensions.js';
import { accept, acceptLoose, isLoose, unclaim } from './accept.js';
import { findMessages, listSuspensions, messageStory, queuedByUpstream, resumeUpstream, suspendUpstream } from './admin.js';
import { releaseTurns } from './batch-turns.js';
import { getBatch, listBatches, listSchedules, releaseDue, setBatchState, setScheduleState } from './batches.js';
import { claim, readySince } from './claim.js';
import { asStoreError, Db, type DbStats, type Queryable, type Tx } from './db.js';
import {
  claimEvents, listDeadEvents, recoverAbandonedEvents, releaseLeases, renewEventLeases, resendDeadEvents, resendStatusEvents, settleEvents,
} from './event-delivery.js';
import { findKey, finishKey, pruneKeys, releasePendingKeys } from './idempotency.js';
import { expireInboundParts, recordInboundPart } from './inbound-parts.js';
import { countLiveInstances, type InstanceLock } from './locks.js';
import { dropRecords, pendingRecords, takeRecords } from './message-records.js';
import { recordInbound } from './outbox.js';
import { connectStore } from './postgres-connect.js';
import type { PostgresStoreOptions } from './postgres-store-options.js';
import { counts, getMessage, outboxDepth, queueDepth } from './reads.js';
import { pruneParked } from './receipts.js';
import { move, movable } from './rerouting.js';
import { pruneFinished } from './retention.js';
import { applyStatusWrites, statusWriteKeys, type StatusWrite, type StatusWriteResult } from './status-writes.js';
import { expire, recoverInflight, renewLeases, type InstanceContext, type Policies } from './submit.js';
import { Underway } from './underway.js';
import { WriteBatcher, type WriteBatcherStats } from './write-batcher.js';

export type { PostgresStoreOptions } from './postgres-store-options.js';

// Per kind of write: two transactions at a time keep a round trip of one hidden behind the other
// and leave most of the pool to claims, events and reads; a batch of 500 holds its locks for a
// few milliseconds.
const BATCH_CONCURRENCY = 2;
const MAX_BATCH = 500;

export class PostgresStore implements Store {
  readonly #db: Db;
  readonly #pool: pg.Pool;
  readonly #lock: InstanceLock;
  readonly #ctx: InstanceContext;
  /** How long this instance's claims hold against the others after it is gone (`PostgresStoreOptions.leaseMs`). */
  readonly leaseMs: number;
  readonly #accepts: WriteBatcher<AcceptRequest, Accepted>;
  readonly #statusWrites: WriteBatcher<StatusWrite, StatusWriteResult>;
  /** Transactions under way outside the batchers: `close` waits for them. */
  readonly #underway = new Underway();
  #closed = false;

  private constructor(pool: pg.Pool, lock: InstanceLock, ctx: InstanceContext, leaseMs: number, records: boolean) {
    this.#pool = pool;
    this.#db = new Db(pool, records);
    this.#lock = lock;
    this.#ctx = ctx;
    this.leaseMs = leaseMs;
    // Writes are refused once the store is closing (`#write`); those already queued still run.
    const batched = { concurrency: BATCH_CONCURRENCY, maxBatch: MAX_BATCH };
    const acceptClaim = { instanceId: ctx.instanceId, leaseMs };
    this.#accepts = new WriteBatcher({ ...batched, runBatch: (requests) => this.#db.transaction((tx) => acceptLoose(tx, requests, acceptClaim)) });
    this.#statusWrites = new WriteBatcher({
      ...batched, keysOf: statusWriteKeys, runBatch: (writes) => this.#db.transaction((tx) => applyStatusWrites(tx, this.#ctx, writes)),
    });
  }

  /** Connects, brings the schema up to date, takes the instance lock and gives back this instance's outbox leases. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const c = await connectStore(options);
    const store = new PostgresStore(c.pool, c.lock, c.ctx, c.leaseMs, options.records === true);
    try {
      await releaseLeases(store.#db.direct, options.instanceId, (options.clock ?? new SystemClock()).wallNow());
      await releasePendingKeys(store.#db.direct, options.instanceId);
      return store;
    } catch (e) {
      await c.pool.end().catch(() => undefined);
      await c.lock.release();
      throw asStoreError(e, `cannot set up the PostgreSQL store (schema ${c.schema})`);
    }
  }

  /** Transactions committed, those run again after a deadlock, and the group commits (accepts; submit outcomes with receipts): for metrics and tests. */
  get stats(): DbStats & { accepts: WriteBatcherStats; statusWrites: WriteBatcherStats } {
    return { ...this.#db.stats, accepts: this.#accepts.stats, statusWrites: this.#statusWrites.stats };
  }

  get instanceId(): string { return this.#ctx.instanceId; }

  readonly claimsOnAccept = true;

  async accept(request: AcceptRequest): Promise<Accepted> {
    if (!isLoose(request)) return this.#tx((tx) => accept(tx, this.#ctx.spaces, request, this.#ctx.instanceId));
    if (request.claimed !== true) return this.#write(this.#accepts, request);
    // Parts claimed by an instance that does not hold its lock are another's to recover: without
    // it the message is queued, as without an admission. (No await while the lock is held: the
    // request joins the batch in the order it came.)
    if (!this.#lock.held) {
      try {
        await this.#ensureLock();
      } catch {
        return this.#write(this.#accepts, { ...request, claimed: false });
      }
    }
    try {
      return await this.#write(this.#accepts, request);
    } catch (e) {
      // Its parts back to the queue, in case its commit went through after all (`unclaim`).
      if (!this.#closed) await this.#db.statement((db) => unclaim(db, request.messages.map((m) => m.id), this.#ctx.instanceId)).catch(() => undefined);
      throw e;
    }
  }

  async claim(upstream: string, now: number, take: number | ClaimShares): Promise<ClaimedMessage[]> {
    await this.#ensureLock();
    return this.#underway.track(this.#db.statement((db) => claim(db, this.#ctx.instanceId, upstream, now, take, now + this.leaseMs)));
  }

  async recordSubmit(messageId: string, results: PartResult[], now: number): Promise<void> {
    await this.#write(this.#statusWrites, { kind: 'submit', outcome: { messageId, results, now } });
  }

  async applyReceipt(receipt: ReceiptRecord): Promise<ReceiptApplied> {
    return (await this.#write(this.#statusWrites, { kind: 'receipt', receipt }))!;
  }

  async recordInbound(inbound: InboundRecord): Promise<void> {
    await this.#tx((tx) => recordInbound(tx, inbound));
  }

  /** Parts of one message may come in on several instances' binds: serialised per message (`inbound-parts.ts`). */
  recordInboundPart(part: InboundPartRecord): Promise<InboundPartOutcome> {
    return this.#tx((tx) => recordInboundPart(tx, this.#ctx.spaces, part));
  }

  /** Several instances may sweep at once: each message is stored by the one that locks it first. */
  expireInboundParts(before: number, limit: number): Promise<ExpiredInbound[]> {
    return this.#tx((tx) => expireInboundParts(tx, this.#ctx.spaces, before, limit));
  }

  /** This instance's inflight parts (a restart), and those of instances that are gone. */
  recoverInflight(policies: Policies, now: number): Promise<number> {
    return this.#tx((tx) => recoverInflight(tx, this.#ctx, policies, now));
  }

  /**
   * The inflight parts of other instances that are gone (lease ended, instance lock free), by the
   * same policies; never this instance's. Meant to run periodically, where `recoverInflight` runs
   * once at start.
   */
  recoverAbandoned(policies: Policies, now: number): Promise<number> {
    return this.#tx((tx) => recoverInflight(tx, this.#ctx, policies, now, true));
  }

  /** Extends this instance's inflight leases that end within half a lease to `now + leaseMs` (most parts are done long before). */
  renewLeases(now: number): Promise<number> {
    return this.#renew((db, before, until) => renewLeases(db, this.#ctx, before, until), now);
  }

  liveInstances(): Promise<number> { return this.#db.statement((db) => countLiveInstances(db, this.#ctx.spaces)); }
  expire(now: number): Promise<number> {
    return this.#tx((tx) => expire(tx, now));
  }

  movable(upstream: string, limit: number, now: number, after?: number): Promise<MovableMessage[]> {
    return this.#read((db) => movable(db, upstream, limit, now, after));
  }

  /** Safe against claims and moves of other instances: each message is decided on under its row locks (`rerouting.ts`). */
  move(moves: readonly MessageMove[], now: number): Promise<string[]> {
    return this.#tx((tx) => move(tx, this.#ctx.spaces, moves, now));
  }

  pruneParked(limits: readonly ParkingLimit[], otherBefore: number): Promise<ParkedDropped[]> {
    return this.#tx((tx) => pruneParked(tx, limits, otherBefore));
  }

  /** Several instances may sweep at once: each skips what another holds (`retention.ts`). */
  pruneFinished(before: number, limit: number, after?: PruneCursor | null): Promise<PruneCounts> {
    return this.#tx((tx) => pruneFinished(tx, this.#ctx.spaces, before, limit, after));
  }

  findIdempotencyKey(ref: IdempotencyKeyRef, now: number): Promise<IdempotencyRecord | undefined> {
    return this.#read((db) => findKey(db, this.#ctx.spaces, this.#ctx.instanceId, ref, now));
  }

  finishIdempotencyKey(ref: IdempotencyKeyRef, response: IdempotentResponse, _now: number): Promise<boolean> {
    return this.#tx((tx) => finishKey(tx, ref, response));
  }

  /** Several instances may sweep at once: each skips the keys another holds. */
  pruneIdempotencyKeys(now: number, limit: number): Promise<number> {
    return this.#tx((tx) => pruneKeys(tx, now, limit));
  }

  getMessage(messageId: string): Promise<MessageView | undefined> {
    return this.#readTx((tx) => getMessage(tx, messageId));
  }

  listBatches(client: string): Promise<Batch[]> {
    return this.#read((db) => listBatches(db, client));
  }

  getBatch(client: string, batchId: number): Promise<Batch | undefined> {
    return this.#read((db) => getBatch(db, client, batchId));
  }

  setBatchState(client: string, batchId: number, state: BatchState, now: number): Promise<Batch | undefined> { return this.#tx((tx) => setBatchState(tx, this.#ctx.spaces, client, batchId, state, now)); }

  listSchedules(client: string): Promise<Schedule[]> { return this.#read((db) => listSchedules(db, client)); }

  setScheduleState(client: string, scheduleId: number, state: 'released' | 'cancelled', now: number): Promise<Schedule | undefined> { return this.#tx((tx) => setScheduleState(tx, this.#ctx.spaces, client, scheduleId, state, now)); }

  releaseDue(now: number): Promise<number> { return this.#tx((tx) => releaseDue(tx, this.#ctx.spaces, now)); }

  releaseTurns(now: number): Promise<TurnsReleased> { return this.#tx((tx) => releaseTurns(tx, this.#ctx.spaces, now)); }

  counts(): Promise<StoreCounts> {
    return this.#readTx((tx) => counts(tx));
  }

  queueDepth(): Promise<QueueDepth> {
    return this.#readTx((tx) => queueDepth(tx));
  }

  readySince(upstream: string, now: number): Promise<number | null> {
    return this.#read((db) => readySince(db, upstream, now));
  }

  async claimEvents(client: string, now: number, limit: number, leaseUntil: number): Promise<OutboxEvent[]> {
    this.#open();
    return this.#underway.track(this.#db.statement((db) => claimEvents(db, this.#ctx.instanceId, client, now, limit, leaseUntil, now + this.leaseMs)));
  }

  /** As `renewLeases`, for the events this instance has claimed. */
  renewEventLeases(now: number): Promise<number> {
    return this.#renew((db, before, until) => renewEventLeases(db, this.#ctx.instanceId, before, until), now);
  }

  /** The events of other instances that are gone (lease ended, instance lock free) are due again. */
  recoverAbandonedEvents(now: number): Promise<number> {
    this.#open();
    return this.#underway.track(this.#db.statement((db) => recoverAbandonedEvents(db, this.#ctx.instanceId, now, this.#ctx.spaces.instance)));
  }

  settleEvents(outcomes: EventOutcome[], now: number): Promise<SettledEvents> {
    return this.#tx((tx) => settleEvents(tx, this.#ctx.instanceId, outcomes, now));
  }

  listDeadEvents(client: string, limit: number, afterId?: number): Promise<DeadEvent[]> {
    return this.#read((db) => listDeadEvents(db, client, limit, afterId));
  }

  resendDeadEvents(client: string, ids: number[] | null, now: number): Promise<ResentDeadEvents> {
    return this.#tx((tx) => resendDeadEvents(tx, client, ids, now));
  }

  resendStatusEvents(filter: ResendFilter, afterSeq: number, limit: number, now: number): Promise<{ queued: number; next: number | null }> {
    return this.#tx((tx) => resendStatusEvents(tx, filter, afterSeq, limit, now));
  }

  outboxDepth(): Promise<OutboxDepth[]> {
    return this.#readTx((tx) => outboxDepth(tx));
  }

  queuedByUpstream(): Promise<Array<{ upstream: string; queued: number }>> {
    return this.#readTx((tx) => queuedByUpstream(tx));
  }

  listSuspensions(): Promise<UpstreamSuspension[]> {
    return this.#read((db) => listSuspensions(db));
  }

  suspendUpstream(s: UpstreamSuspension): Promise<UpstreamSuspension> {
    return this.#tx((tx) => suspendUpstream(tx, s));
  }

  resumeUpstream(upstream: string): Promise<boolean> {
    return this.#tx((tx) => resumeUpstream(tx, upstream));
  }

  findMessages(query: MessageQuery): Promise<FoundMessages> {
    return this.#readTx((tx) => findMessages(tx, query));
  }

  messageStory(messageId: string): Promise<MessageStory | undefined> {
    return this.#readTx((tx) => messageStory(tx, messageId));
  }

  takeRecords(limit: number, now: number): Promise<MessageRecord[]> {
    return this.#tx((tx) => takeRecords(tx, this.#ctx.instanceId, limit, now, now + this.leaseMs));
  }

  dropRecords(seqs: readonly number[]): Promise<number> {
    return this.#tx((tx) => dropRecords(tx, seqs));
  }

  pendingRecords(): Promise<number> {
    return this.#read((db) => pendingRecords(db));
  }

  /**
   * Refuses new writes, waits for the writes called before (committed or failed) and the
   * queries under way, closes the pool and lets go of the instance lock.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([this.#accepts.drained(), this.#statusWrites.drained()]);
    await this.#underway.settled();
    await this.#pool.end();
    await this.#lock.release();
  }

  #open(): void {
    if (this.#closed) throw new SmppdError(ErrorCode.INTERNAL, 'the store is closed');
  }

  #tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new SmppdError(ErrorCode.INTERNAL, 'the store is closed'));
    return this.#underway.track(this.#db.transaction(fn));
  }


  /**
   * A renewal of this instance's leases, after the instance lock is taken again if its connection
   * was lost: a claim, which takes it too, may not come soon (the pool full, an SMSC down).
   */
  async #renew(fn: (db: Queryable, renewBefore: number, leaseUntil: number) => Promise<number>, now: number): Promise<number> {
    await this.#ensureLock();
    return this.#underway.track(this.#db.statement((db) => fn(db, now + this.leaseMs / 2, now + this.leaseMs)));
  }

  /** The instance lock, taken again if its connection was lost, before this instance claims parts. */
  async #ensureLock(): Promise<void> {
    this.#open();
    await this.#lock.ensure().catch((e: unknown) => { throw asStoreError(e, 'cannot take the instance lock again'); });
    this.#open();
  }

  #write<I, O>(batcher: WriteBatcher<I, O>, item: I): Promise<O> {
    if (this.#closed) return Promise.reject(new SmppdError(ErrorCode.INTERNAL, 'the store is closed'));
    return batcher.write(item);
  }

  /** Reads in one read-only transaction (`Db.read`): one snapshot, and settings of its own. */
  async #readTx<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    this.#open();
    return this.#db.read(fn);
  }

  async #read<T>(fn: (db: Queryable) => Promise<T>): Promise<T> {
    this.#open();
    try {
      return await fn(this.#db.direct);
    } catch (e) {
      throw asStoreError(e, 'a store read failed');
    }
  }
}
