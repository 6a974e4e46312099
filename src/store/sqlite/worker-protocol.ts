/**
 * What the daemon's thread and the store's worker thread say to each other (`worker-store.ts`,
 * `store-worker.ts`). Calls and replies travel in arrays, one postMessage per turn of each
 * event loop, not one per call. Structured cloning turns a Buffer into a plain Uint8Array: the
 * side that receives a message body gives it back its Buffer view (no copy).
 */
import { ErrorCode, SmppdError } from '../../core/errors.js';
import type { ClaimedMessage } from '../claims.js';
import type { InboundPartRecord, InboundRecord } from '../inbound.js';
import type { AcceptRequest, StoredPartBody } from '../intake.js';
import type { MessageMove } from '../rerouting.js';
import type { Store } from '../store.js';
import type { SqliteStoreOptions } from './sqlite-store.js';

export type StoreMethod = Exclude<keyof Store, 'close'>;

export interface StoreCall {
  id: number;
  method: StoreMethod;
  args: unknown[];
}

/** An error as it crosses the thread boundary: an SmppdError keeps its code and details. */
export interface WireError {
  message: string;
  code: ErrorCode;
  details?: Readonly<Record<string, unknown>>;
}

export type StoreReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: WireError };

/** The store's options, less the clock: the worker's group commit runs on its own system clock. */
export type WorkerStoreOptions = Omit<SqliteStoreOptions, 'clock'>;

export type ToWorker = { kind: 'calls'; calls: StoreCall[] } | { kind: 'close' };

export type FromWorker =
  | { kind: 'ready' }
  | { kind: 'open-failed'; error: WireError }
  | { kind: 'replies'; replies: StoreReply[] }
  | { kind: 'closed' };

export function toWireError(e: unknown): WireError {
  if (e instanceof SmppdError) return { message: e.message, code: e.code, ...(e.details ? { details: e.details } : {}) };
  return { message: e instanceof Error ? e.message : String(e), code: ErrorCode.INTERNAL };
}

export function fromWireError(e: WireError): SmppdError {
  return new SmppdError(e.code, e.message, e.details);
}

/** A cloned Buffer (a Uint8Array) as a Buffer over the same memory. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A part body that crossed the boundary: its bytes become Buffers again. */
function reviveBody(part: StoredPartBody): void {
  part.shortMessage = asBuffer(part.shortMessage);
  if (part.messagePayload) part.messagePayload = asBuffer(part.messagePayload);
}

/**
 * A call's arguments as its method takes them: better-sqlite3 binds Buffers as BLOBs, so the
 * bodies of accepted and moved parts, and the bytes of an inbound message or part, become the
 * Buffers their types say they are.
 */
export function reviveArgs(method: StoreMethod, args: unknown[]): unknown[] {
  if (method === 'accept') {
    for (const message of (args[0] as AcceptRequest).messages) message.parts.forEach(reviveBody);
    // The vendor TLVs are packed into one BLOB (`packTlvs`), which takes a Uint8Array as it is.
  } else if (method === 'move') {
    for (const moved of args[0] as MessageMove[]) moved.parts.forEach(reviveBody);
  } else if (method === 'recordInbound') {
    const inbound = args[0] as InboundRecord;
    if (inbound.raw) inbound.raw = asBuffer(inbound.raw);
  } else if (method === 'recordInboundPart') {
    const part = args[0] as InboundPartRecord;
    part.piece = { ...part.piece, body: asBuffer(part.piece.body) };
  }
  return args;
}

/** The claimed parts' bodies become Buffers again (the pool writes them into PDUs). */
export function reviveClaimed(messages: ClaimedMessage[]): ClaimedMessage[] {
  for (const message of messages) {
    message.parts.forEach(reviveBody);
    message.vendorTlvs?.forEach((t) => { t.value = asBuffer(t.value); });
  }
  return messages;
}
