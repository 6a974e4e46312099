/**
 * The SQLite store on a worker thread: the same `Store`, with SQLite's CPU on the machine's
 * other core. On two cores the daemon's one thread was saturated with HTTP, SMPP, receipt
 * parsing and SQLite together; SQLite alone was more than half of it. Calls are queued and
 * sent in one message per turn of the event loop, and the worker answers in batches, so the
 * cost of crossing threads is paid per batch, not per call. The promises keep `Store`'s meaning:
 * a write resolves after its commit, and a read made after that sees it.
 */
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { ErrorCode, SmppdError } from '../../core/errors.js';
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
import {
  fromWireError, reviveClaimed, type FromWorker, type StoreCall, type StoreMethod, type ToWorker,
  type WorkerStoreOptions,
} from './worker-protocol.js';

export interface WorkerStoreHooks {
  /** The worker died (out of memory, an uncaught error, or it exited) while the store was open: nothing more can be stored. */
  onFatal?: (error: SmppdError) => void;
  /** Caps the worker's heap (Node's default otherwise); reaching it kills the worker, which is fatal. */
  resourceLimits?: ResourceLimits;
}

interface PendingCall {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class SqliteWorkerStore implements Store {
  readonly #worker: Worker;
  readonly #pending = new Map<number, PendingCall>();
  #nextId = 1;
  #outgoing: StoreCall[] = [];
  #sendScheduled = false;
  #failure: SmppdError | undefined;
  #closing: Promise<void> | undefined;
  #closed = false;

  private constructor(worker: Worker) {
    this.#worker = worker;
  }

  /** Starts the worker and opens the store in it; rejects as `SqliteStore.open` would. */
  static async open(options: WorkerStoreOptions, hooks: WorkerStoreHooks = {}): Promise<SqliteWorkerStore> {
    const [entry, workerOptions] = workerEntry(options);
    const worker = new Worker(entry, hooks.resourceLimits ? { ...workerOptions, resourceLimits: hooks.resourceLimits } : workerOptions);
    const store = new SqliteWorkerStore(worker);
    await new Promise<void>((resolve, reject) => {
      const settle = (error?: SmppdError): void => {
        worker.off('message', onMessage);
        worker.off('error', onError);
        if (!error) return resolve();
        void worker.terminate();
        reject(error);
      };
      const onMessage = (m: FromWorker): void => {
        if (m.kind === 'ready') settle();
        else if (m.kind === 'open-failed') settle(fromWireError(m.error));
        else settle(new SmppdError(ErrorCode.INTERNAL, `the store worker said ${m.kind} before it was ready`));
      };
      const onError = (e: Error): void => settle(new SmppdError(ErrorCode.INTERNAL, `the store worker failed to start: ${e.message}`, undefined, { cause: e }));
      worker.on('message', onMessage);
      worker.on('error', onError);
    });
    worker.on('message', (m: FromWorker) => store.#onMessage(m));
    worker.on('error', (e) => store.#fail(new SmppdError(ErrorCode.INTERNAL, `the store worker failed: ${e.message}`, undefined, { cause: e }), hooks));
    worker.on('exit', (code) => {
      // Exiting is what a worker does after close(): only an exit nobody asked for is fatal.
      if (!store.#closing) store.#fail(new SmppdError(ErrorCode.INTERNAL, `the store worker exited (code ${code})`), hooks);
    });
    return store;
  }

  accept(request: AcceptRequest): Promise<Accepted> {
    return this.#call('accept', [request]);
  }

  async claim(upstream: string, now: number, take: number | ClaimShares): Promise<ClaimedMessage[]> {
    return reviveClaimed(await this.#call<ClaimedMessage[]>('claim', [upstream, now, take]));
  }

  recordSubmit(messageId: string, results: PartResult[], now: number): Promise<void> {
    return this.#call('recordSubmit', [messageId, results, now]);
  }

  applyReceipt(receipt: ReceiptRecord): Promise<ReceiptApplied> {
    return this.#call('applyReceipt', [receipt]);
  }

  pruneParked(limits: readonly ParkingLimit[], otherBefore: number): Promise<ParkedDropped[]> {
    return this.#call('pruneParked', [limits, otherBefore]);
  }

  pruneFinished(before: number, limit: number, after?: PruneCursor | null): Promise<PruneCounts> {
    return this.#call('pruneFinished', [before, limit, after ?? null]);
  }

  movable(upstream: string, limit: number, now: number, after?: number): Promise<MovableMessage[]> {
    return this.#call('movable', [upstream, limit, now, after]);
  }

  move(moves: readonly MessageMove[], now: number): Promise<string[]> {
    return this.#call('move', [moves, now]);
  }

  recordInbound(inbound: InboundRecord): Promise<void> {
    return this.#call('recordInbound', [inbound]);
  }

  recordInboundPart(part: InboundPartRecord): Promise<InboundPartOutcome> {
    return this.#call('recordInboundPart', [part]);
  }

  expireInboundParts(before: number, limit: number): Promise<ExpiredInbound[]> {
    return this.#call('expireInboundParts', [before, limit]);
  }

  recoverInflight(policies: Readonly<Record<string, 'resend' | 'fail'>>, now: number): Promise<number> {
    return this.#call('recoverInflight', [policies, now]);
  }

  recoverAbandoned(_policies: Readonly<Record<string, 'resend' | 'fail'>>, _now: number): Promise<number> {
    return Promise.resolve(0);
  }

  expire(now: number): Promise<number> {
    return this.#call('expire', [now]);
  }

  findIdempotencyKey(ref: IdempotencyKeyRef, now: number): Promise<IdempotencyRecord | undefined> {
    return this.#call('findIdempotencyKey', [ref, now]);
  }

  finishIdempotencyKey(ref: IdempotencyKeyRef, response: IdempotentResponse, now: number): Promise<boolean> {
    return this.#call('finishIdempotencyKey', [ref, response, now]);
  }

  pruneIdempotencyKeys(now: number, limit: number): Promise<number> {
    return this.#call('pruneIdempotencyKeys', [now, limit]);
  }

  getMessage(messageId: string): Promise<MessageView | undefined> {
    return this.#call('getMessage', [messageId]);
  }

  listBatches(client: string): Promise<Batch[]> {
    return this.#call('listBatches', [client]);
  }

  getBatch(client: string, batchId: number): Promise<Batch | undefined> {
    return this.#call('getBatch', [client, batchId]);
  }

  setBatchState(client: string, batchId: number, state: BatchState, now: number): Promise<Batch | undefined> {
    return this.#call('setBatchState', [client, batchId, state, now]);
  }

  listSchedules(client: string): Promise<Schedule[]> {
    return this.#call('listSchedules', [client]);
  }

  setScheduleState(client: string, scheduleId: number, state: 'released' | 'cancelled', now: number): Promise<Schedule | undefined> {
    return this.#call('setScheduleState', [client, scheduleId, state, now]);
  }

  releaseDue(now: number): Promise<number> {
    return this.#call('releaseDue', [now]);
  }

  releaseTurns(now: number): Promise<TurnsReleased> {
    return this.#call('releaseTurns', [now]);
  }

  counts(): Promise<StoreCounts> {
    return this.#call('counts', []);
  }

  queueDepth(): Promise<QueueDepth> {
    return this.#call('queueDepth', []);
  }

  readySince(upstream: string, now: number): Promise<number | null> {
    return this.#call('readySince', [upstream, now]);
  }

  claimEvents(client: string, now: number, limit: number, leaseUntil: number): Promise<OutboxEvent[]> {
    return this.#call('claimEvents', [client, now, limit, leaseUntil]);
  }

  settleEvents(outcomes: EventOutcome[], now: number): Promise<SettledEvents> {
    return this.#call('settleEvents', [outcomes, now]);
  }

  takeRecords(limit: number, now: number): Promise<MessageRecord[]> {
    return this.#call('takeRecords', [limit, now]);
  }

  dropRecords(seqs: readonly number[]): Promise<number> {
    return this.#call('dropRecords', [seqs]);
  }

  pendingRecords(): Promise<number> {
    return this.#call('pendingRecords', []);
  }

  listDeadEvents(client: string, limit: number, afterId?: number): Promise<DeadEvent[]> {
    return this.#call('listDeadEvents', [client, limit, afterId]);
  }

  resendDeadEvents(client: string, ids: number[] | null, now: number): Promise<ResentDeadEvents> {
    return this.#call('resendDeadEvents', [client, ids, now]);
  }

  resendStatusEvents(filter: ResendFilter, afterSeq: number, limit: number, now: number): Promise<{ queued: number; next: number | null }> {
    return this.#call('resendStatusEvents', [filter, afterSeq, limit, now]);
  }

  outboxDepth(): Promise<OutboxDepth[]> {
    return this.#call('outboxDepth', []);
  }

  queuedByUpstream(): Promise<Array<{ upstream: string; queued: number }>> {
    return this.#call('queuedByUpstream', []);
  }

  listSuspensions(): Promise<UpstreamSuspension[]> {
    return this.#call('listSuspensions', []);
  }

  suspendUpstream(s: UpstreamSuspension): Promise<UpstreamSuspension> {
    return this.#call('suspendUpstream', [s]);
  }

  resumeUpstream(upstream: string): Promise<boolean> {
    return this.#call('resumeUpstream', [upstream]);
  }

  findMessages(query: MessageQuery): Promise<FoundMessages> {
    return this.#call('findMessages', [query]);
  }

  messageStory(messageId: string): Promise<MessageStory | undefined> {
    return this.#call('messageStory', [messageId]);
  }

  /** Sends what is queued, lets the worker commit it and close the file, and ends the worker. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#failure) return;
      this.#send();
      const closed = new Promise<void>((resolve) => {
        this.#worker.on('message', (m: FromWorker) => { if (m.kind === 'closed') resolve(); });
        this.#worker.once('exit', () => resolve());
      });
      this.#post({ kind: 'close' });
      await closed;
      this.#closed = true;
      await this.#worker.terminate();
      // Anything still unanswered now never will be (a call made while closing).
      this.#rejectAll(new SmppdError(ErrorCode.INTERNAL, 'the store is closed'));
    })();
    return this.#closing;
  }

  #call<T>(method: StoreMethod, args: unknown[]): Promise<T> {
    if (this.#failure) return Promise.reject(this.#failure);
    if (this.#closing) return Promise.reject(new SmppdError(ErrorCode.INTERNAL, 'the store is closed'));
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.#outgoing.push({ id, method, args });
      if (this.#sendScheduled) return;
      this.#sendScheduled = true;
      // The calls of one turn (a chunk of receipts, a claim's worth of outcomes) go together.
      setImmediate(() => this.#send());
    });
  }

  #send(): void {
    this.#sendScheduled = false;
    if (this.#outgoing.length === 0) return;
    const calls = this.#outgoing;
    this.#outgoing = [];
    this.#post({ kind: 'calls', calls });
  }

  #post(message: ToWorker): void {
    this.#worker.postMessage(message);
  }

  #onMessage(m: FromWorker): void {
    if (m.kind !== 'replies') return;
    for (const r of m.replies) {
      const pending = this.#pending.get(r.id);
      if (!pending) continue;
      this.#pending.delete(r.id);
      if (r.ok) pending.resolve(r.value);
      else pending.reject(fromWireError(r.error));
    }
  }

  #fail(error: SmppdError, hooks: WorkerStoreHooks): void {
    if (this.#failure || this.#closed) return;
    this.#failure = error;
    this.#rejectAll(error);
    hooks.onFatal?.(error);
  }

  #rejectAll(error: SmppdError): void {
    for (const p of this.#pending.values()) p.reject(error);
    this.#pending.clear();
    this.#outgoing = [];
  }
}

/**
 * The worker's module and options. Built, it is the compiled `store-worker.js` beside this
 * file. Run from the TypeScript sources (the tests), it is `store-worker.ts`, loaded through the
 * same module hooks the tests' child processes use.
 */
function workerEntry(options: WorkerStoreOptions): [URL, { workerData: WorkerStoreOptions; execArgv?: string[] }] {
  const fromSources = import.meta.url.endsWith('.ts');
  const entry = new URL(fromSources ? './store-worker.ts' : './store-worker.js', import.meta.url);
  if (!fromSources) return [entry, { workerData: options }];
  const hooks = new URL('../../../test/support/ts-register.mjs', import.meta.url);
  return [entry, { workerData: options, execArgv: ['--import', hooks.href] }];
}
