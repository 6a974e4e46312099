/**
 * What the API answers, from what the store holds: the job list entry of §2.4 (its fields
 * exactly), and the shapes the provider does not show (batch detail, schedules, message status),
 * which smppd defines. Each is typed by its schema in api/responses.ts, which /openapi.json is
 * generated from: a field added here and not there (or there and not here) does not compile.
 */
import type { z } from 'zod';
import type {
  BATCH_STATES, batchDetailSchema, batchListEntrySchema, inboundEventSchema, messageStatusSchema, Same, SCHEDULE_STATES, scheduleEntrySchema, statusEventSchema,
} from '../../api/responses.js';
import type { DecodeProblem } from '../../sms/text-codec.js';
import type { Batch, BatchState, Schedule, ScheduleState } from '../../store/batches.js';
import type { InboundEventPayload, StatusEventPayload } from '../../store/event-payloads.js';
import type { MessageView } from '../../store/status-reads.js';

/** `2026-01-01T10:00:00` (UTC, seconds, no zone: §2.4). */
export function isoWithoutZone(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19);
}

/** `2026-01-01T10:00:00.000Z`. */
export function isoUtc(ms: number): string {
  return new Date(ms).toISOString();
}

/** GET /sms/list entry (§2.4). */
export type BatchListEntry = z.output<typeof batchListEntrySchema>;

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
export type BatchDetail = z.output<typeof batchDetailSchema>;

export function batchDetail(b: Batch): BatchDetail {
  return { ...batchListEntry(b), state: b.state, scheduleId: b.scheduleId };
}

/** GET /sms/listSchedule entry, and the answer of send-now and abort/schedule. */
export type ScheduleEntry = z.output<typeof scheduleEntrySchema>;

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
export type MessageStatus = z.output<typeof messageStatusSchema>;

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

/** The store's types that the reply schemas describe without defining them: a change to one side alone does not compile. */
const agree: [
  Same<(typeof BATCH_STATES)[number], BatchState>,
  Same<(typeof SCHEDULE_STATES)[number], ScheduleState>,
  // The receipt is stored as read (sms/receipt.ts's Receipt, which api/responses.ts holds to its schema).
  Same<Omit<z.output<typeof statusEventSchema>, 'receipt'>, Omit<StatusEventPayload, 'receipt'>>,
  Same<z.output<typeof inboundEventSchema>, Omit<InboundEventPayload, 'problems'> & { problems: DecodeProblem[] }>,
] = [true, true, true, true];
void agree;
