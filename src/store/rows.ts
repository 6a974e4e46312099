/**
 * Rows as both stores read them (snake_case, the same tables and flags in SQLite and
 * PostgreSQL: 0/1 integers, times in milliseconds), and their conversion to the store's types.
 * SQL stays in each store; the few selects here are written in the SQL both dialects share.
 */
import type { RepeatEvery } from '../core/recurrence.js';
import type { DeliveryStatus } from '../sms/status.js';
import type { Batch, BatchState, Schedule, ScheduleState } from './batches.js';
import type { ClaimedMessage, PartState } from './claims.js';
import type { DeadEvent } from './event-resends.js';
import type { InboundRecord } from './inbound.js';
import type { StoredPartBody } from './intake.js';
import type { OutboxEvent } from './outbox.js';
import { unpackTlvs } from './rules/regulatory.js';
import type { MessageView, PartView } from './status-reads.js';

export interface BatchRow {
  id: number;
  client: string;
  sender_id: string;
  req_type: string;
  message_type: string;
  campaign_name: string | null;
  state: BatchState;
  total: number;
  processed: number;
  created_at: number;
  /** From a join with schedules. */
  schedule_id: number | null;
  /** From a join with schedules. */
  schedule_state: ScheduleState | null;
}

export interface ScheduleRow {
  id: number;
  client: string;
  batch_id: number;
  run_at: number;
  repeat: string | null;
  state: ScheduleState;
  created_at: number;
  /** The series of a recurring schedule (`rules/recurrence.ts`); every is null for one run. */
  every: RepeatEvery | null;
  max_runs: number | null;
  until_at: number | null;
  zone: string | null;
  /** The first run: its wall time in `zone` is the series'. */
  anchor_at: number | null;
  runs: number;
  last_run_at: number | null;
}

export interface MessageRow {
  seq: number;
  id: string;
  client: string;
  upstream: string;
  /** The route it was accepted on; null for messages stored before routes were kept. */
  route: string | null;
  batch_id: number | null;
  source: string;
  destination: string;
  text: string;
  message_type: 'TEXT' | 'UNICODE';
  encoding: 'GSM-7' | 'UNICODE';
  registered_delivery: number;
  source_ton: number;
  source_npi: number;
  dest_ton: number;
  dest_npi: number;
  validity_period: string;
  expires_at: number | null;
  status: DeliveryStatus;
  reason: string | null;
  processed: number;
  /** 1: its status changes become outbox events. */
  events: number;
  created_at: number;
  updated_at: number;
  /** The TLVs every part carries, packed (`rules/regulatory.ts`); null: none. */
  vendor_tlvs: Buffer | null;
}

export interface PartRow {
  message_id: string;
  part: number;
  upstream: string;
  batch_id: number | null;
  data_coding: number;
  esm_class: number;
  short_message: Buffer;
  sar_ref: number | null;
  sar_total: number | null;
  sar_seq: number | null;
  payload: Buffer | null;
  state: PartState;
  status: DeliveryStatus;
  smsc_id: string | null;
  match_key: string | null;
  /** The bind that took its submit_sm. */
  bind: string | null;
  attempts: number;
  reason: string | null;
  updated_at: number;
}

/**
 * The columns of a part that its status changes read and write (submit outcomes, receipts,
 * local failures): no bodies, so a row costs no Buffer copies.
 */
export type PartStatusRow = Pick<PartRow, 'message_id' | 'part' | 'upstream' | 'batch_id' | 'state' | 'status' | 'smsc_id' | 'match_key'
  | 'bind' | 'attempts' | 'reason' | 'updated_at'>;

/** The columns of a message that settling it reads and writes (status, reason, processed and updated_at are written). */
export type MessageStatusRow = Pick<MessageRow, 'id' | 'client' | 'upstream' | 'batch_id' | 'destination' | 'status' | 'reason'
  | 'processed' | 'events' | 'updated_at'>;

/** A message and its parts (ordered by part), as a status change works on them in memory. */
export interface MessageState<M extends MessageStatusRow = MessageStatusRow, P extends PartStatusRow = PartStatusRow> {
  message: M;
  parts: P[];
}

/**
 * Batches with their schedule: every read of a batch goes through this. A past run of a recurring
 * schedule still names its schedule (`b.schedule_id`), with no schedule state: its run was released.
 */
export const BATCH_SELECT = `SELECT b.id, b.client, b.sender_id, b.req_type, b.message_type, b.campaign_name, b.state,
  b.total, b.processed, b.created_at, COALESCE(s.id, b.schedule_id) AS schedule_id, s.state AS schedule_state
  FROM batches b LEFT JOIN schedules s ON s.batch_id = b.id`;

export const SCHEDULE_SELECT = `SELECT id, client, batch_id, run_at, repeat, state, created_at,
  every, max_runs, until_at, zone, anchor_at, runs, last_run_at FROM schedules`;

export function toBatch(r: BatchRow): Batch {
  return {
    id: r.id,
    client: r.client,
    senderId: r.sender_id,
    reqType: r.req_type,
    messageType: r.message_type,
    campaignName: r.campaign_name,
    state: r.state,
    total: r.total,
    processed: r.processed,
    pending: r.total - r.processed,
    createdAt: r.created_at,
    scheduleId: r.schedule_id,
  };
}

export function toSchedule(r: ScheduleRow): Schedule {
  return {
    id: r.id,
    client: r.client,
    batchId: r.batch_id,
    runAt: r.run_at,
    repeat: r.every === null ? null : { every: r.every, count: r.max_runs, until: r.until_at, zone: r.zone ?? 'UTC' },
    state: r.state,
    createdAt: r.created_at,
    runs: r.runs,
    lastRunAt: r.last_run_at,
  };
}

/** The columns of a part that a read of its message shows. */
export type PartViewRow = Pick<PartRow, 'part' | 'status' | 'smsc_id' | 'reason' | 'attempts' | 'updated_at'>;

export function toPartView(r: PartViewRow): PartView {
  return {
    part: r.part,
    status: r.status,
    smscMessageId: r.smsc_id,
    reason: r.reason,
    attempts: r.attempts,
    updatedAt: r.updated_at,
  };
}

/** The columns of a message that a read of it shows. */
export type MessageViewRow = Pick<MessageRow, 'id' | 'client' | 'upstream' | 'route' | 'batch_id' | 'source' | 'destination' | 'status' | 'reason'
  | 'created_at' | 'updated_at'>;

/** A message as `getMessage` shows it, its parts ordered by part. */
export function toMessageView(m: MessageViewRow, parts: readonly PartViewRow[]): MessageView {
  return {
    messageId: m.id,
    client: m.client,
    upstream: m.upstream,
    route: m.route,
    batchId: m.batch_id,
    source: m.source,
    destination: m.destination,
    status: m.status,
    reason: m.reason,
    createdAt: m.created_at,
    updatedAt: m.updated_at,
    parts: parts.map(toPartView),
  };
}

export function toPartBody(r: PartBodyRow): StoredPartBody {
  const body: StoredPartBody = { dataCoding: r.data_coding, esmClass: r.esm_class, shortMessage: r.short_message };
  if (r.sar_ref !== null && r.sar_total !== null && r.sar_seq !== null) {
    body.sar = { refNum: r.sar_ref, total: r.sar_total, seq: r.sar_seq };
  }
  if (r.payload !== null) body.messagePayload = r.payload;
  return body;
}

/** The columns of a part that its submit_sm is built from. */
export type PartBodyRow = Pick<PartRow, 'data_coding' | 'esm_class' | 'short_message' | 'sar_ref' | 'sar_total' | 'sar_seq' | 'payload'>;

/**
 * A queued part as a claim hands it over: its body and attempts, with its message's addressing
 * (so a claim needs no second read), and nothing a claim does not use.
 */
export type QueuedPartRow = PartBodyRow & Pick<PartRow, 'message_id' | 'part' | 'upstream' | 'attempts'>
  & Pick<MessageRow, 'client' | 'source' | 'destination' | 'registered_delivery' | 'source_ton' | 'source_npi' | 'dest_ton' | 'dest_npi' | 'validity_period'
    | 'vendor_tlvs'>;

export type ClaimedPart = ClaimedMessage['parts'][number];

export function toClaimedPart(p: QueuedPartRow): ClaimedPart {
  return { ...toPartBody(p), part: p.part, attempts: p.attempts };
}

/** A claimed message from one of its queued parts (each carries the addressing), with `parts`. */
export function toClaimedMessage(first: QueuedPartRow, parts: ClaimedPart[]): ClaimedMessage {
  const vendorTlvs = unpackTlvs(first.vendor_tlvs);
  return {
    id: first.message_id,
    client: first.client,
    upstream: first.upstream,
    source: first.source,
    destination: first.destination,
    registeredDelivery: first.registered_delivery,
    sourceTon: first.source_ton,
    sourceNpi: first.source_npi,
    destTon: first.dest_ton,
    destNpi: first.dest_npi,
    validityPeriod: first.validity_period,
    ...(vendorTlvs.length > 0 ? { vendorTlvs } : {}),
    parts,
  };
}

/** Claimed messages from their queued parts, given in claim order (a message's parts together, by part). */
export function groupClaimed(rows: readonly QueuedPartRow[]): ClaimedMessage[] {
  const claimed: ClaimedMessage[] = [];
  let current: ClaimedMessage | undefined;
  for (const p of rows) {
    if (current?.id !== p.message_id) {
      current = toClaimedMessage(p, []);
      claimed.push(current);
    }
    current.parts.push(toClaimedPart(p));
  }
  return claimed;
}

/** Since when the first part a claim would take has been ready: its last change, or its not_before when later. */
export function readyAt(first: { updated_at: number; not_before: number | null }): number {
  return Math.max(first.updated_at, first.not_before ?? 0);
}

export interface OutboxRow {
  id: number;
  kind: 'status' | 'inbound';
  message_id: string | null;
  client: string;
  payload: string;
  created_at: number;
  queued_at: number;
  attempts: number;
}

export function toOutboxEvent(r: OutboxRow): OutboxEvent {
  return {
    id: r.id, kind: r.kind, messageId: r.message_id, client: r.client, payload: r.payload,
    createdAt: r.created_at, queuedAt: r.queued_at, attempts: r.attempts,
  };
}

export type DeadEventRow = Pick<OutboxRow, 'id' | 'kind' | 'message_id' | 'payload' | 'created_at' | 'attempts'> & {
  last_error: string | null;
  died_at: number;
};

export function toDeadEvent(r: DeadEventRow): DeadEvent {
  return {
    id: r.id, kind: r.kind, messageId: r.message_id, payload: r.payload, createdAt: r.created_at,
    attempts: r.attempts, lastError: r.last_error, diedAt: r.died_at,
  };
}

/** A message as resendDlr re-pushes its status. */
export type ResendMessageRow = Pick<MessageRow, 'seq' | 'id' | 'client' | 'upstream' | 'batch_id' | 'destination' | 'status' | 'reason'
  | 'updated_at'>;

/** A part of it: the one that last reached the message's status is named in the event. */
export type ResendPartRow = Pick<PartRow, 'part' | 'status' | 'smsc_id' | 'updated_at'>;

/** The columns of an inbound row, as both stores write them (a whole, cleanly decoded message leaves the last three null). */
export function inboundRow(inbound: InboundRecord): {
  upstream: string; client: string | null; source: string; destination: string; text: string; data_coding: number; parts: number;
  received_at: number; missing_parts: string | null; problems: string | null; raw: Buffer | null;
} {
  const missing = inbound.missingParts ?? [];
  const problems = inbound.problems ?? [];
  return {
    upstream: inbound.upstream,
    client: inbound.client,
    source: inbound.source,
    destination: inbound.destination,
    text: inbound.text,
    data_coding: inbound.dataCoding,
    parts: inbound.parts,
    received_at: inbound.receivedAt,
    missing_parts: missing.length > 0 ? JSON.stringify(missing) : null,
    problems: problems.length > 0 ? problems.join(',') : null,
    raw: problems.length > 0 && inbound.raw ? Buffer.from(inbound.raw) : null,
  };
}
