/**
 * What the API answers, from what the store holds: the job list entry of §2.4 (its fields
 * exactly), and the shapes the provider does not show (batch detail, schedules, message status),
 * which smppd defines. Times: §2.4's createdOn is an ISO 8601 date-time without zone, written in
 * UTC; the shapes smppd defines use ISO 8601 UTC with the Z.
 */
import type { Batch, BatchState, Schedule, ScheduleState } from '../../store/batches.js';
import type { MessageView } from '../../store/status-reads.js';
import type { DeliveryStatus } from '../../sms/status.js';

/** `2026-01-01T10:00:00` (UTC, seconds, no zone: §2.4). */
export function isoWithoutZone(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19);
}

/** `2026-01-01T10:00:00.000Z`. */
export function isoUtc(ms: number): string {
  return new Date(ms).toISOString();
}

/** GET /sms/list entry (§2.4). */
export interface BatchListEntry {
  /** Pass as batch_Id. */
  id: number;
  senderId: string;
  /** 'single' (a scheduled sendSms) or 'bulk' (sendbulk). */
  reqType: string;
  /** The encoding: GSM-7 or UNICODE. */
  messageType: string;
  campaignName: string;
  total: number;
  processed: number;
  pending: number;
  /** true while the batch runs; false when paused or aborted. */
  active: boolean;
  createdOn: string;
}

export function batchListEntry(b: Batch): BatchListEntry {
  return {
    id: b.id,
    senderId: b.senderId,
    reqType: b.reqType,
    messageType: b.messageType,
    campaignName: b.campaignName ?? '',
    total: b.total,
    processed: b.processed,
    pending: b.pending,
    active: b.state === 'active',
    createdOn: isoWithoutZone(b.createdAt),
  };
}

/** GET /sms/edit, and the answer of pause, resume and abort: the list entry with its state. */
export interface BatchDetail extends BatchListEntry {
  state: BatchState;
  /** The schedule that holds the batch, or null. */
  scheduleId: number | null;
}

export function batchDetail(b: Batch): BatchDetail {
  return { ...batchListEntry(b), state: b.state, scheduleId: b.scheduleId };
}

/** GET /sms/listSchedule entry, and the answer of send-now and abort/schedule. */
export interface ScheduleEntry {
  /** Pass as scheduleId. */
  id: number;
  batchId: number;
  /** scheduled → released (send-now, or its time came) | cancelled (abort/schedule). */
  state: ScheduleState;
  /** When it releases its messages (as planned; a send-now does not change it). */
  time: string;
  repeat: string | null;
  /** When it was released: its time came, or a send-now. Null while scheduled and once cancelled. */
  releasedAt: string | null;
  senderId: string | null;
  campaignName: string | null;
  total: number | null;
  createdAt: string;
}

export function scheduleEntry(s: Schedule, batch: Batch | undefined): ScheduleEntry {
  return {
    id: s.id,
    batchId: s.batchId,
    state: s.state,
    time: isoUtc(s.runAt),
    repeat: s.repeat,
    releasedAt: s.releasedAt === null ? null : isoUtc(s.releasedAt),
    senderId: batch?.senderId ?? null,
    campaignName: batch ? (batch.campaignName ?? '') : null,
    total: batch?.total ?? null,
    createdAt: isoUtc(s.createdAt),
  };
}

/** GET /sms/status/{messageId}. */
export interface MessageStatus {
  messageId: string;
  /** SUBMITTED, SENT, DELIVERED, READ, FAILED or REJECTED (§2.6); new values may appear. */
  status: DeliveryStatus;
  reason: string | null;
  createdAt: string;
  updatedAt: string;
  batchId: number | null;
  destination: string;
  parts: Array<{ part: number; status: DeliveryStatus; smscMessageId: string | null }>;
}

export function messageStatus(m: MessageView): MessageStatus {
  return {
    messageId: m.messageId,
    status: m.status,
    reason: m.reason,
    createdAt: isoUtc(m.createdAt),
    updatedAt: isoUtc(m.updatedAt),
    batchId: m.batchId,
    destination: m.destination,
    parts: m.parts.map((p) => ({ part: p.part, status: p.status, smscMessageId: p.smscMessageId })),
  };
}
