/**
 * The store's role for idempotency keys (the IETF httpapi draft's `Idempotency-Key`, and the
 * queue's redeliveries): per scope and client, a key names one request, whose result a repeat of
 * it is answered with until the key expires. A key is recorded in the commit that stores its
 * request's first message (`AcceptRequest.idempotencyKey`), so a request whose commit happened
 * has its key, whatever failed after, and one refused before it has none. The contract every
 * role shares (commits, times) is in `store.ts`.
 */

/** Whose keys: the HTTP API's `Idempotency-Key` header, or the queue ingress's message ids and references. */
export type IdempotencyScope = 'http' | 'amqp';

/** One key of one client. */
export interface IdempotencyKeyRef {
  scope: IdempotencyScope;
  client: string;
  /** As the client sent it (HTTP: 1–255 printable ASCII characters). */
  key: string;
}

/** A key as an accept records it. */
export interface NewIdempotencyKey extends IdempotencyKeyRef {
  /** What the request was (a hash of its endpoint and body): a repeat with another one is refused. */
  fingerprint: string;
  /** Wall ms after which the key is forgotten (a request with it is new again) and may be swept. */
  expiresAt: number;
  /**
   * Recorded `pending` under this store instance (a sendbulk upload stored in several commits,
   * whose response is recorded at its end by `finishIdempotencyKey`); else `done`, with the
   * accept's one message as its result.
   */
  pending?: boolean;
}

/** Who is running a pending key's request. */
export type IdempotencyOwner =
  /** This store instance (process): the request is running here, or ended without recording its response. */
  | 'this'
  /** Another instance sharing the store, running now (PostgreSQL). */
  | 'other'
  /** Nobody: the process that ran it is gone (a crash, a restart); its response will never be recorded. */
  | 'none';

/** A recorded response: the HTTP status and the body as sent. */
export interface IdempotentResponse {
  status: number;
  body: string;
}

/** A key as recorded and not expired. */
export interface IdempotencyRecord {
  fingerprint: string;
  state: 'pending' | 'done';
  /** The one message of a single send; null for a sendbulk upload. */
  messageId: string | null;
  /** The batch its request made (a sendbulk upload, a scheduled send); null for none. */
  batchId: number | null;
  /** The response recorded by `finishIdempotencyKey`; null until then, and for a single send. */
  response: IdempotentResponse | null;
  /** For a pending key: who runs its request. 'none' for a done one. */
  owner: IdempotencyOwner;
  createdAt: number;
  expiresAt: number;
}

export interface IdempotencyKeys {
  /** The key as recorded, or undefined when it is not recorded or has expired (`expiresAt <= now`). */
  findIdempotencyKey(ref: IdempotencyKeyRef, now: number): Promise<IdempotencyRecord | undefined>;

  /**
   * Records the response of a pending key (its request is over, however it ended): it is done.
   * False when the key was not pending (done already, by another finisher, or expired and gone).
   */
  finishIdempotencyKey(ref: IdempotencyKeyRef, response: IdempotentResponse, now: number): Promise<boolean>;

  /**
   * Deletes up to `limit` (≥ 1) keys expired at `now`, oldest expiry first, in one commit; returns
   * how many. Call again while it returns `limit`.
   */
  pruneIdempotencyKeys(now: number, limit: number): Promise<number>;
}
