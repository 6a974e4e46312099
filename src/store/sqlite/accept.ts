/** accept: new messages with their parts queued, in a new or an existing batch, with an optional schedule. */
import { ErrorCode, SmppdError } from '../../core/errors.js';
import type { AcceptRequest, Accepted, BatchState, NewMessage, ScheduleState } from '../store.js';
import { isoTime, writeStatusEvent } from './outbox.js';
import { heldBy } from './rows.js';
import type { Sql } from './sql.js';

interface Target {
  batchId: number | null;
  scheduleId: number | null;
  held: 0 | 1;
}

export function accept(sql: Sql, request: AcceptRequest): Accepted {
  const target = resolveTarget(sql, request);
  for (const message of request.messages) insertMessage(sql, message, target, request.now);
  if (target.batchId !== null && request.batch === undefined) {
    sql.run('UPDATE batches SET total = total + ?, updated_at = ? WHERE id = ?', request.messages.length, request.now, target.batchId);
  }
  return { batchId: target.batchId, scheduleId: target.scheduleId };
}

/** The batch and schedule the messages join, created when asked for. */
function resolveTarget(sql: Sql, request: AcceptRequest): Target {
  const { batch, batchId, schedule, now } = request;
  if (batch !== undefined && batchId !== undefined) {
    throw new SmppdError(ErrorCode.INTERNAL, 'accept takes a new batch or an existing batchId, not both');
  }
  if (schedule !== undefined && batch === undefined) {
    throw new SmppdError(ErrorCode.INTERNAL, 'a schedule is created with a new batch');
  }
  if (batch !== undefined) {
    const created = sql.run(
      `INSERT INTO batches (client, sender_id, req_type, message_type, campaign_name, state, total, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 'active', ?, ?, ?)`,
      batch.client, batch.senderId, batch.reqType, batch.messageType, batch.campaignName, request.messages.length, now, now,
    );
    const id = Number(created.lastInsertRowid);
    if (schedule === undefined) return { batchId: id, scheduleId: null, held: 0 };
    const scheduled = sql.run(
      `INSERT INTO schedules (client, batch_id, run_at, repeat, state, created_at, updated_at) VALUES (?, ?, ?, ?, 'scheduled', ?, ?)`,
      schedule.client, id, schedule.runAt, schedule.repeat, now, now,
    );
    return { batchId: id, scheduleId: Number(scheduled.lastInsertRowid), held: heldBy('active', 'scheduled') };
  }
  if (batchId !== undefined) return existingBatch(sql, batchId, request.messages[0]?.client);
  return { batchId: null, scheduleId: null, held: 0 };
}

/** Appending to a batch: it must exist for the messages' client and still take messages. */
function existingBatch(sql: Sql, batchId: number, client: string | undefined): Target {
  const row = sql.get<{ client: string; state: BatchState; schedule_id: number | null; schedule_state: ScheduleState | null }>(
    `SELECT b.client, b.state, s.id AS schedule_id, s.state AS schedule_state
     FROM batches b LEFT JOIN schedules s ON s.batch_id = b.id WHERE b.id = ?`,
    batchId,
  );
  if (!row || (client !== undefined && row.client !== client)) {
    throw new SmppdError(ErrorCode.BATCH_NOT_FOUND, `batch ${batchId} does not exist`, { batchId });
  }
  if (row.state === 'aborted') {
    throw new SmppdError(ErrorCode.INVALID_STATE_TRANSITION, 'an aborted batch takes no more messages', { batchId });
  }
  if (row.schedule_state === 'cancelled') {
    throw new SmppdError(ErrorCode.INVALID_STATE_TRANSITION, 'the schedule of this batch is cancelled', { batchId });
  }
  return { batchId, scheduleId: row.schedule_id, held: heldBy(row.state, row.schedule_state) };
}

function insertMessage(sql: Sql, m: NewMessage, target: Target, now: number): void {
  if (m.parts.length === 0) throw new SmppdError(ErrorCode.INTERNAL, `message ${m.id} has no parts`, { messageId: m.id });
  const inserted = sql.run(
    `INSERT INTO messages (id, client, upstream, batch_id, source, destination, text, message_type, encoding, campaign_name,
       registered_delivery, source_ton, source_npi, dest_ton, dest_npi, validity_period, expires_at, not_before,
       status, events, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'SUBMITTED', ?, ?, ?)`,
    m.id, m.client, m.upstream, target.batchId, m.source, m.destination, m.text, m.messageType, m.encoding, m.campaignName,
    m.registeredDelivery, m.sourceTon, m.sourceNpi, m.destTon, m.destNpi, m.validityPeriod, m.expiresAt, m.notBefore,
    m.events ? 1 : 0, now, now,
  );
  const seq = Number(inserted.lastInsertRowid);
  m.parts.forEach((p, i) => {
    sql.run(
      `INSERT INTO parts (message_id, part, message_seq, upstream, batch_id, expires_at, held, data_coding, esm_class,
         short_message, sar_ref, sar_total, sar_seq, payload, state, status, not_before, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', 'SUBMITTED', ?, ?)`,
      m.id, i + 1, seq, m.upstream, target.batchId, m.expiresAt, target.held, p.dataCoding, p.esmClass,
      p.shortMessage, p.sar?.refNum ?? null, p.sar?.total ?? null, p.sar?.seq ?? null, p.messagePayload ?? null,
      m.notBefore, now,
    );
  });
  if (m.events) {
    writeStatusEvent(sql, m, {
      type: 'status', messageId: m.id, channel: 'sms', destination: m.destination, status: 'SUBMITTED', timestamp: isoTime(now),
      reason: null, batchId: target.batchId, part: null, parts: m.parts.length, smscMessageId: null, receipt: null,
    }, now);
  }
}
