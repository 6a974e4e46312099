/** Rows as SQLite returns them (snake_case), and their conversion to the store's types. */
import type { DeliveryStatus } from '../../sms/status.js';
import type { Batch, BatchState, PartState, PartView, Schedule, ScheduleState, StoredPartBody } from '../store.js';

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
}

export interface MessageRow {
  seq: number;
  id: string;
  client: string;
  upstream: string;
  batch_id: number | null;
  source: string;
  destination: string;
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
  attempts: number;
  reason: string | null;
  updated_at: number;
}

/** Batches with their schedule: every read of a batch goes through this. */
export const BATCH_SELECT = `SELECT b.id, b.client, b.sender_id, b.req_type, b.message_type, b.campaign_name, b.state,
  b.total, b.processed, b.created_at, s.id AS schedule_id, s.state AS schedule_state
  FROM batches b LEFT JOIN schedules s ON s.batch_id = b.id`;

export const SCHEDULE_SELECT = 'SELECT id, client, batch_id, run_at, repeat, state, created_at FROM schedules';

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
    repeat: r.repeat,
    state: r.state,
    createdAt: r.created_at,
  };
}

export function toPartView(r: PartRow): PartView {
  return {
    part: r.part,
    status: r.status,
    smscMessageId: r.smsc_id,
    reason: r.reason,
    attempts: r.attempts,
    updatedAt: r.updated_at,
  };
}

export function toPartBody(r: PartRow): StoredPartBody {
  const body: StoredPartBody = { dataCoding: r.data_coding, esmClass: r.esm_class, shortMessage: r.short_message };
  if (r.sar_ref !== null && r.sar_total !== null && r.sar_seq !== null) {
    body.sar = { refNum: r.sar_ref, total: r.sar_total, seq: r.sar_seq };
  }
  if (r.payload !== null) body.messagePayload = r.payload;
  return body;
}

/**
 * Whether parts of a batch wait: 1 unless the batch is active and its schedule (if any) is
 * released. Parts without a batch never wait on one.
 */
export function heldBy(batchState: BatchState | null, scheduleState: ScheduleState | null): 0 | 1 {
  if (batchState === null) return 0;
  return batchState === 'active' && (scheduleState === null || scheduleState === 'released') ? 0 : 1;
}
