/**
 * Requests with an idempotency key (the HTTP API's `Idempotency-Key`, draft-ietf-httpapi-
 * idempotency-key-header; the queue's message ids and references): the first is run and its key
 * recorded in its first commit (`IdempotencyKeys`); a repeat with the same fingerprint is answered
 * what the first recorded, one with another is refused (IDEMPOTENCY_KEY_REUSED). A repeat that
 * comes while the first still runs waits for it: in this process, behind it (one request per key
 * runs at a time); on another instance sharing the store, by reading the key again every
 * `pollMs`, at most `maxWaitMs` (then IDEMPOTENCY_KEY_IN_USE: try again later). A request refused
 * before its first commit records nothing, so its repeat is run anew.
 */
import type { Clock } from '../core/clock.js';
import { ErrorCode, isSmppdError, SmppdError } from '../core/errors.js';
import type { IdempotencyKeyRef, IdempotencyKeys, IdempotencyRecord, NewIdempotencyKey } from '../store/idempotency.js';

/** Between two reads of a key another instance's request holds. */
export const IDEMPOTENCY_POLL_MS = 200;
/** The longest a repeat waits for another instance's request with its key. */
export const IDEMPOTENCY_MAX_WAIT_MS = 120_000;
/**
 * Times a request is decided again after its first commit found the key recorded meanwhile (by
 * another instance): each time the key is read again and found, so one is enough but for a key
 * that expired in between.
 */
const MAX_RACES = 3;

/** One keyed request. */
export interface KeyedRequest extends IdempotencyKeyRef {
  /** What the request is (its endpoint and body, hashed): a repeat must have the same. */
  fingerprint: string;
  /** How long its key is kept, ms (`http.idempotencyHours`, `amqp.dedupHours`). > 0. */
  keepMs: number;
}

/** What a keyed request does, by what its key's record says. */
export interface KeyedWork<T> {
  /** No record: runs the request, recording `key` with its first commit. */
  first(key: NewIdempotencyKey): Promise<T>;
  /** A record done: the answer it gives again. */
  replay(record: IdempotencyRecord): T | Promise<T>;
  /**
   * A pending record whose request will never record its response (its process is gone, or it
   * ended here without recording it): decide, record (`finishIdempotencyKey`) and answer. Absent:
   * the request records no pending key (INTERNAL if one is found).
   */
  orphaned?(record: IdempotencyRecord): Promise<T>;
}

export interface IdempotencyGateOptions {
  store: Pick<IdempotencyKeys, 'findIdempotencyKey'>;
  clock: Clock;
  /** Default IDEMPOTENCY_POLL_MS. */
  pollMs?: number;
  /** Default IDEMPOTENCY_MAX_WAIT_MS. */
  maxWaitMs?: number;
}

export class IdempotencyGate {
  readonly #store: Pick<IdempotencyKeys, 'findIdempotencyKey'>;
  readonly #clock: Clock;
  readonly #pollMs: number;
  readonly #maxWaitMs: number;
  /** The request running for each key in this process; its repeats wait for it. */
  readonly #running = new Map<string, Promise<void>>();

  constructor(o: IdempotencyGateOptions) {
    this.#store = o.store;
    this.#clock = o.clock;
    this.#pollMs = o.pollMs ?? IDEMPOTENCY_POLL_MS;
    this.#maxWaitMs = o.maxWaitMs ?? IDEMPOTENCY_MAX_WAIT_MS;
  }

  /** Keys whose request runs in this process now. */
  get running(): number {
    return this.#running.size;
  }

  /** Runs `work` as its key's record says; throws IDEMPOTENCY_KEY_REUSED, IDEMPOTENCY_KEY_IN_USE, and what `work` throws. */
  async run<T>(request: KeyedRequest, work: KeyedWork<T>): Promise<T> {
    const id = `${request.scope}\u0000${request.client}\u0000${request.key}`;
    for (let before = this.#running.get(id); before !== undefined; before = this.#running.get(id)) await before;
    let done!: () => void;
    // Set in the same turn as the look above: no other request of this key starts in between.
    this.#running.set(id, new Promise<void>((resolve) => { done = resolve; }));
    try {
      return await this.#decide(request, work);
    } finally {
      this.#running.delete(id);
      done();
    }
  }

  async #decide<T>(request: KeyedRequest, work: KeyedWork<T>): Promise<T> {
    const ref: IdempotencyKeyRef = { scope: request.scope, client: request.client, key: request.key };
    const waitUntil = this.#clock.now() + this.#maxWaitMs;
    for (let races = 0; ; ) {
      const now = this.#clock.wallNow();
      const found = await this.#store.findIdempotencyKey(ref, now);
      if (found === undefined) {
        try {
          return await work.first({ ...ref, fingerprint: request.fingerprint, expiresAt: now + request.keepMs });
        } catch (e) {
          // Another instance recorded it first, and nothing of this one was stored: read it.
          if (isSmppdError(e, ErrorCode.IDEMPOTENCY_KEY_IN_USE) && ++races < MAX_RACES) continue;
          throw e;
        }
      }
      if (found.fingerprint !== request.fingerprint) throw reused();
      if (found.state === 'done') return work.replay(found);
      if (found.owner === 'other') {
        if (this.#clock.now() >= waitUntil) throw stillRunning(this.#maxWaitMs);
        await this.#sleep(this.#pollMs);
        continue;
      }
      // Pending here, but this process runs no request of the key (it is this one): its request ended without its response, or its process is gone.
      if (work.orphaned === undefined) throw new SmppdError(ErrorCode.INTERNAL, 'a pending idempotency key was found for a request that records none');
      return work.orphaned(found);
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => { this.#clock.setTimer(ms, resolve); });
  }
}

function reused(): SmppdError {
  return new SmppdError(ErrorCode.IDEMPOTENCY_KEY_REUSED,
    'this idempotency key was used with another request (another body or endpoint); a new request needs a new key');
}

function stillRunning(waitedMs: number): SmppdError {
  return new SmppdError(ErrorCode.IDEMPOTENCY_KEY_IN_USE,
    `the request with this idempotency key is still running on another instance after ${Math.round(waitedMs / 1000)} s; try again later`,
    { retryAfterSeconds: 5 });
}
