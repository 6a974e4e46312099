/**
 * The rules of idempotency keys, decided once for both stores: what an accept may record for its
 * key, and a stored row as the role's `IdempotencyRecord`.
 */
import { ErrorCode, SmppdError } from '../../core/errors.js';
import type { IdempotencyKeyRef, IdempotencyOwner, IdempotencyRecord, NewIdempotencyKey } from '../idempotency.js';
import type { AcceptRequest } from '../intake.js';

/** A row of `idempotency_keys` as both stores read it (the owner as the store decided it). */
export interface IdempotencyRow {
  fingerprint: string;
  state: 'pending' | 'done';
  message_id: string | null;
  batch_id: number | null;
  status: number | null;
  body: string | null;
  owner: IdempotencyOwner;
  created_at: number;
  expires_at: number;
}

/** The columns an accept writes for its key, the batch it made given. */
export interface KeyToRecord extends NewIdempotencyKey {
  state: 'pending' | 'done';
  messageId: string | null;
}

/**
 * What the accept records for `request.idempotencyKey`, or null without one. A done key names the
 * request's one message; a pending key the batch the request creates (a bulk upload's first
 * chunk): anything else is a caller's bug (INTERNAL).
 */
export function keyToRecord(request: AcceptRequest): KeyToRecord | null {
  const key = request.idempotencyKey;
  if (key === undefined) return null;
  if (key.pending === true) {
    if (request.batch === undefined) throw new SmppdError(ErrorCode.INTERNAL, 'a pending idempotency key is recorded with the batch its request creates');
    return { ...key, state: 'pending', messageId: null };
  }
  if (request.messages.length !== 1) throw new SmppdError(ErrorCode.INTERNAL, 'an idempotency key is recorded done with one message');
  return { ...key, state: 'done', messageId: request.messages[0]!.id };
}

/** Thrown by an accept whose key is recorded (and not expired): nothing of it was stored. */
export function keyInUse(ref: IdempotencyKeyRef): SmppdError {
  return new SmppdError(ErrorCode.IDEMPOTENCY_KEY_IN_USE, 'this idempotency key is recorded by another request', { scope: ref.scope, client: ref.client });
}

export function recordOf(row: IdempotencyRow): IdempotencyRecord {
  return {
    fingerprint: row.fingerprint,
    state: row.state,
    messageId: row.message_id,
    batchId: row.batch_id,
    response: row.status === null || row.body === null ? null : { status: row.status, body: row.body },
    owner: row.state === 'done' ? 'none' : row.owner,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}
