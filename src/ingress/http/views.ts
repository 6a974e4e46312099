/**
 * What the API answers, from what the store holds: the job list entry of §2.4 (its fields
 * exactly), and the shapes the provider does not show (batch detail, schedules, message status),
 * which smppd defines. Times: §2.4's createdOn is an ISO 8601 date-time without zone, written in
 * UTC; the shapes smppd defines use ISO 8601 UTC with the Z.
 */
import type { RepeatEvery } from '../../core/recurrence.js';
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
  /** scheduled → released (send-now, or its time came) | cancelled (abort/schedule); a recurring one is scheduled until its last run. */
  state: ScheduleState;
  /** When it releases its messages: a recurring schedule's next run. */
  time: string;
  /** The series, normalised; null for a schedule of one run. */
  repeat: ScheduleRepeat | null;
  /** Runs released so far (send-now included). */
  runs: number;
  /** When the last run was released; null before the first. */
  lastRun: string | null;
  senderId: string | null;
  campaignName: string | null;
  total: number | null;
  createdAt: string;
}

/** A recurring schedule's series (docs/api.md, "Recurring schedules"). */
export interface ScheduleRepeat {
  every: RepeatEvery;
  /** Runs in all, the first included; null: until aborted (or until). */
  count: number | null;
  /** No run after this instant (UTC); null: none. */
  until: string | null;
  /** The zone whose local time the runs keep. */
  gmt: string;
}

export function scheduleEntry(s: Schedule, batch: Batch | undefined): ScheduleEntry {
  return {
    id: s.id,
    batchId: s.batchId,
    state: s.state,
    time: isoUtc(s.runAt),
    repeat: s.repeat && { every: s.repeat.every, count: s.repeat.count, until: s.repeat.until === null ? null : isoUtc(s.repeat.until), gmt: s.repeat.zone },
    runs: s.runs,
    lastRun: s.lastRunAt === null ? null : isoUtc(s.lastRunAt),
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
