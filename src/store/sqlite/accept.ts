/**
 * accept: new messages with their parts queued, in a new or an existing batch, with an optional
 * schedule, and the request's idempotency key (`idempotency.ts`). Which batch and schedule they join: `../rules/batches.ts`.
 */
import type { Accepted, AcceptRequest, NewMessage } from '../intake.js';
import {
  appendTarget, checkAcceptTarget, checkHasParts, newBatchTarget, NO_BATCH, type AcceptTarget, type AppendedBatchRow,
} from '../rules/batches.js';
import { packTlvs, regulatoryColumns } from '../rules/regulatory.js';
import { submittedEvent } from '../status-events.js';
import { recordKey } from './idempotency.js';
import { writeStatusEvent } from './outbox.js';
import { startSeries } from './recurrence.js';
import type { Sql } from './sql.js';

export function accept(sql: Sql, request: AcceptRequest): Accepted {
  const target = resolveTarget(sql, request);
  recordKey(sql, request, target.batchId);
  for (const message of request.messages) insertMessage(sql, message, target, request.now);
  if (target.batchId !== null && request.batch === undefined) {
    // A spaced batch whose turns had run out has turns again.
    sql.run(`UPDATE batches SET total = total + ?, updated_at = ?,
      next_turn_at = CASE WHEN spacing_ms IS NULL THEN NULL ELSE COALESCE(next_turn_at, ?) END WHERE id = ?`,
    request.messages.length, request.now, request.now, target.batchId);
  }
  return { batchId: target.batchId, scheduleId: target.scheduleId };
}

const APPENDED_BATCH_SQL = `SELECT b.client, b.state, s.id AS schedule_id, s.state AS schedule_state, b.spacing_ms
  FROM batches b LEFT JOIN schedules s ON s.batch_id = b.id WHERE b.id = ?`;

/** The batch and schedule the messages join, created when asked for. */
function resolveTarget(sql: Sql, request: AcceptRequest): AcceptTarget {
  checkAcceptTarget(request);
  const { batch, batchId, schedule, now } = request;
  if (batch !== undefined) {
    const spacing = batch.spacingMs ?? null;
    const created = sql.run(
      `INSERT INTO batches (client, sender_id, req_type, message_type, campaign_name, state, total, spacing_ms, next_turn_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 'active', ?, ?, ?, ?, ?)`,
      batch.client, batch.senderId, batch.reqType, batch.messageType, batch.campaignName, request.messages.length,
      spacing, spacing === null ? null : now, now, now,
    );
    const id = Number(created.lastInsertRowid);
    if (schedule === undefined) return newBatchTarget(id, null, spacing !== null);
    const scheduled = sql.run(
      `INSERT INTO schedules (client, batch_id, run_at, repeat, state, created_at, updated_at) VALUES (?, ?, ?, ?, 'scheduled', ?, ?)`,
      schedule.client, id, schedule.runAt, schedule.repeat, now, now,
    );
    startSeries(sql, scheduled.lastInsertRowid, schedule);
    return newBatchTarget(id, Number(scheduled.lastInsertRowid), spacing !== null);
  }
  if (batchId !== undefined) return appendTarget(batchId, request.messages[0]?.client, sql.get<AppendedBatchRow>(APPENDED_BATCH_SQL, batchId));
  return NO_BATCH;
}

function insertMessage(sql: Sql, m: NewMessage, target: AcceptTarget, now: number): void {
  checkHasParts(m);
  const ids = regulatoryColumns(m.regulatory);
  const inserted = sql.run(
    `INSERT INTO messages (id, client, upstream, route, batch_id, source, destination, text, message_type, encoding, campaign_name,
       registered_delivery, source_ton, source_npi, dest_ton, dest_npi, validity_period, expires_at, not_before,
       status, events, created_at, updated_at, pe_id, template_id, telemarketer_id, vendor_tlvs)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'SUBMITTED', ?, ?, ?, ?, ?, ?, ?)`,
    m.id, m.client, m.upstream, m.route, target.batchId, m.source, m.destination, m.text, m.messageType, m.encoding, m.campaignName,
    m.registeredDelivery, m.sourceTon, m.sourceNpi, m.destTon, m.destNpi, m.validityPeriod, m.expiresAt, m.notBefore,
    m.events ? 1 : 0, now, now, ids.pe_id, ids.template_id, ids.telemarketer_id, packTlvs(m.vendorTlvs),
  );
  const seq = Number(inserted.lastInsertRowid);
  m.parts.forEach((p, i) => {
    sql.run(
      `INSERT INTO parts (message_id, part, message_seq, upstream, client, batch_id, expires_at, held, data_coding, esm_class,
         short_message, sar_ref, sar_total, sar_seq, payload, state, status, not_before, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', 'SUBMITTED', ?, ?)`,
      m.id, i + 1, seq, m.upstream, m.client, target.batchId, m.expiresAt, target.held, p.dataCoding, p.esmClass,
      p.shortMessage, p.sar?.refNum ?? null, p.sar?.total ?? null, p.sar?.seq ?? null, p.messagePayload ?? null,
      m.notBefore, now,
    );
  });
  if (m.events) writeStatusEvent(sql, m, submittedEvent(m, target.batchId, now), now);
}
