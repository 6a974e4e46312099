/**
 * accept: new messages with their parts queued, in a new or an existing batch, with an optional
 * schedule, in one transaction of three multi-row INSERTs (messages, parts, SUBMITTED events)
 * whatever the number of messages, and a fourth for the requests' idempotency keys when they have
 * any (`idempotency.ts`). The parts of a `claimed` request are inserted inflight under
 * this instance's claim instead, as `claim.ts` would leave them: the dispatcher sends them at
 * once, and no claim has to find them, lock them and write them again.
 */
import { ErrorCode, SmppdError } from '../../core/errors.js';
import type { Accepted, AcceptRequest, NewMessage } from '../intake.js';
import {
  appendTarget, checkAcceptTarget, checkHasParts, newBatchTarget, NO_BATCH, type AcceptTarget, type AppendedBatchRow,
} from '../rules/batches.js';
import { packTlvs, regulatoryColumns } from '../rules/regulatory.js';
import { submittedEvent } from '../status-events.js';
import type { Queryable, Tx } from './db.js';
import { recordKeys } from './idempotency.js';
import { startSeries } from './recurrence.js';
import { lockBatchGate, type LockSpaces } from './locks.js';
import { writeNewMessageEvents } from './outbox.js';

export async function accept(tx: Tx, spaces: LockSpaces, request: AcceptRequest, instanceId: string): Promise<Accepted> {
  if (request.claimed === true) throw new SmppdError(ErrorCode.INTERNAL, 'a claimed accept has no batch and no schedule');
  request.messages.forEach(checkHasParts);
  const target = await resolveTarget(tx, spaces, request);
  await recordKeys(tx, [{ request, batchId: target.batchId }], instanceId);
  if (request.messages.length > 0) await insertMessages(tx, request.messages.map((m) => ({ m, now: request.now, claimed: false })), target);
  if (target.batchId !== null && request.batch === undefined) {
    // A spaced batch whose turns had run out has turns again.
    await tx.run(`UPDATE batches SET total = total + $1, updated_at = $2,
      next_turn_at = CASE WHEN spacing_ms IS NULL THEN NULL ELSE COALESCE(next_turn_at, $2) END WHERE id = $3`,
    [request.messages.length, request.now, target.batchId]);
  }
  return { batchId: target.batchId, scheduleId: target.scheduleId };
}

/** Whether the request only adds messages: no batch, new or existing, and no schedule (a sendSms). */
export function isLoose(request: AcceptRequest): boolean {
  return request.batch === undefined && request.batchId === undefined && request.schedule === undefined;
}

/** Who claims the parts of `claimed` requests, and until when (`claim.ts`'s lease, from each request's `now`). */
export interface AcceptClaim {
  instanceId: string;
  leaseMs: number;
}

/**
 * Several loose requests (`isLoose`) in the same three statements, their messages in the order
 * of the requests: what single sendSms calls under load come to.
 */
export async function acceptLoose(tx: Tx, requests: readonly AcceptRequest[], claim: AcceptClaim): Promise<Accepted[]> {
  for (const r of requests) {
    if (!isLoose(r)) throw new SmppdError(ErrorCode.INTERNAL, 'acceptLoose takes requests without a batch or a schedule');
    r.messages.forEach(checkHasParts);
  }
  await recordKeys(tx, requests.map((request) => ({ request, batchId: null })), claim.instanceId);
  const rows = requests.flatMap((r) => r.messages.map((m) => ({ m, now: r.now, claimed: r.claimed === true })));
  if (rows.length > 0) await insertMessages(tx, rows, NO_BATCH, claim);
  return requests.map((r) => ({ batchId: null, scheduleId: null, ...(r.claimed === true ? { claimed: true } : {}) }));
}

/**
 * After a claimed accept failed: its parts back to the queue, if its commit went through after
 * all (a connection lost during COMMIT). Nobody hands them to the pool now, and this live
 * instance's claims are recovered by nobody before its restart. Best effort: when this fails
 * too, or runs before the server has finished that commit, the parts wait for the restart's
 * `recoverInflight`, which applies `onUncertain` to them (requeued, or FAILED as uncertain
 * though never sent).
 */
export async function unclaim(db: Queryable, messageIds: string[], instanceId: string): Promise<void> {
  await db.run(
    "UPDATE parts SET state = 'queued', claimed_by = NULL, lease_until = NULL WHERE message_id = ANY($1::text[]) AND state = 'inflight' AND claimed_by = $2",
    [messageIds, instanceId],
  );
}

/** The batch and schedule the messages join, created when asked for. */
async function resolveTarget(tx: Tx, spaces: LockSpaces, request: AcceptRequest): Promise<AcceptTarget> {
  checkAcceptTarget(request);
  const { batch, batchId, schedule, now } = request;
  if (batch !== undefined) {
    const spacing = batch.spacingMs ?? null;
    const created = await tx.row<{ id: number }>(
      `INSERT INTO batches (client, sender_id, req_type, message_type, campaign_name, state, total, spacing_ms, next_turn_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, 'active', $6, $7, $8, $9, $9) RETURNING id`,
      [batch.client, batch.senderId, batch.reqType, batch.messageType, batch.campaignName, request.messages.length,
        spacing, spacing === null ? null : now, now],
    );
    const id = created!.id;
    if (schedule === undefined) return newBatchTarget(id, null, spacing !== null);
    const scheduled = await tx.row<{ id: number }>(
      `INSERT INTO schedules (client, batch_id, run_at, repeat, state, created_at, updated_at) VALUES ($1, $2, $3, $4, 'scheduled', $5, $5) RETURNING id`,
      [schedule.client, id, schedule.runAt, schedule.repeat, now],
    );
    await startSeries(tx, scheduled!.id, schedule);
    return newBatchTarget(id, scheduled!.id, spacing !== null);
  }
  if (batchId !== undefined) return existingBatch(tx, spaces, batchId, request.messages[0]?.client);
  return NO_BATCH;
}

/** Appending to a batch: it must exist for the messages' client and still take messages. Its gate is held until COMMIT. */
async function existingBatch(tx: Tx, spaces: LockSpaces, batchId: number, client: string | undefined): Promise<AcceptTarget> {
  await lockBatchGate(tx, spaces, batchId);
  const row = await tx.row<AppendedBatchRow>(
    `SELECT b.client, b.state, s.id AS schedule_id, s.state AS schedule_state, b.spacing_ms
     FROM batches b LEFT JOIN schedules s ON s.batch_id = b.id WHERE b.id = $1`,
    [batchId],
  );
  return appendTarget(batchId, client, row);
}

// Rows come out of unnest in the order given (WITH ORDINALITY ... ORDER BY), so `seq` follows
// the request's order: claims take the messages in the order they were accepted.
const INSERT_MESSAGES_SQL = `INSERT INTO messages (id, client, upstream, route, batch_id, source, destination, text, message_type, encoding,
    campaign_name, registered_delivery, source_ton, source_npi, dest_ton, dest_npi, validity_period, expires_at, not_before,
    status, events, created_at, updated_at, pe_id, template_id, telemarketer_id, vendor_tlvs)
  SELECT u.id, u.client, u.upstream, u.route, $1, u.source, u.destination, u.text, u.message_type, u.encoding, u.campaign_name,
    u.registered_delivery, u.source_ton, u.source_npi, u.dest_ton, u.dest_npi, u.validity_period, u.expires_at, u.not_before,
    'SUBMITTED', u.events, u.now, u.now, u.pe_id, u.template_id, u.telemarketer_id, u.vendor_tlvs
  FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[],
    $12::int[], $13::int[], $14::int[], $15::int[], $16::int[], $17::text[], $18::bigint[], $19::bigint[], $20::smallint[], $21::text[],
    $22::text[], $23::text[], $24::text[], $25::bytea[])
    WITH ORDINALITY AS u(now, id, client, upstream, source, destination, text, message_type, encoding, campaign_name,
      registered_delivery, source_ton, source_npi, dest_ton, dest_npi, validity_period, expires_at, not_before, events, route,
      pe_id, template_id, telemarketer_id, vendor_tlvs, n)
  ORDER BY u.n
  RETURNING seq, id`;

// A claimed part: inflight, claimed_by and lease_until as CLAIM_SQL sets them (`claim.ts`).
const INSERT_PARTS_SQL = `INSERT INTO parts (message_id, part, message_seq, upstream, client, batch_id, expires_at, held, data_coding, esm_class,
    short_message, sar_ref, sar_total, sar_seq, payload, state, status, not_before, updated_at, claimed_by, lease_until)
  SELECT u.message_id, u.part, u.message_seq, u.upstream, u.client, $1, u.expires_at, $2, u.data_coding, u.esm_class,
    u.short_message, u.sar_ref, u.sar_total, u.sar_seq, u.payload, CASE WHEN u.claimed THEN 'inflight' ELSE 'queued' END, 'SUBMITTED',
    u.not_before, u.now, CASE WHEN u.claimed THEN $17::text END, CASE WHEN u.claimed THEN u.now + $18::bigint END
  FROM unnest($3::bigint[], $4::text[], $5::int[], $6::bigint[], $7::text[], $8::bigint[], $9::int[], $10::int[], $11::bytea[],
    $12::int[], $13::int[], $14::int[], $15::bytea[], $16::bigint[], $19::boolean[], $20::text[])
    AS u(now, message_id, part, message_seq, upstream, expires_at, data_coding, esm_class, short_message, sar_ref, sar_total, sar_seq, payload,
      not_before, claimed, client)`;

/** A new message, the time its request was accepted, and whether its parts go inflight under this instance's claim. */
interface NewRow {
  m: NewMessage;
  now: number;
  claimed: boolean;
}

const NO_CLAIM: AcceptClaim = { instanceId: '', leaseMs: 0 };

async function insertMessages(tx: Tx, rows: readonly NewRow[], target: AcceptTarget, claim: AcceptClaim = NO_CLAIM): Promise<void> {
  const col = <T>(f: (m: NewMessage) => T): T[] => rows.map((r) => f(r.m));
  const ids = rows.map((r) => regulatoryColumns(r.m.regulatory));
  const inserted = await tx.rows<{ seq: number; id: string }>(INSERT_MESSAGES_SQL, [
    target.batchId, rows.map((r) => r.now),
    col((m) => m.id), col((m) => m.client), col((m) => m.upstream), col((m) => m.source), col((m) => m.destination),
    col((m) => m.text), col((m) => m.messageType), col((m) => m.encoding), col((m) => m.campaignName),
    col((m) => m.registeredDelivery), col((m) => m.sourceTon), col((m) => m.sourceNpi), col((m) => m.destTon), col((m) => m.destNpi),
    col((m) => m.validityPeriod), col((m) => m.expiresAt), col((m) => m.notBefore), col((m) => (m.events ? 1 : 0)),
    col((m) => m.route), ids.map((c) => c.pe_id), ids.map((c) => c.template_id), ids.map((c) => c.telemarketer_id),
    col((m) => packTlvs(m.vendorTlvs)),
  ]);
  const seqOf = new Map(inserted.map((r) => [r.id, r.seq]));
  const parts = rows.flatMap(({ m, now, claimed }) => m.parts.map((p, i) => ({ m, p, now, claimed, part: i + 1 })));
  tx.send(INSERT_PARTS_SQL, [
    target.batchId, target.held, parts.map((x) => x.now),
    parts.map((x) => x.m.id), parts.map((x) => x.part), parts.map((x) => seqOf.get(x.m.id)), parts.map((x) => x.m.upstream),
    parts.map((x) => x.m.expiresAt), parts.map((x) => x.p.dataCoding), parts.map((x) => x.p.esmClass), parts.map((x) => x.p.shortMessage),
    parts.map((x) => x.p.sar?.refNum ?? null), parts.map((x) => x.p.sar?.total ?? null), parts.map((x) => x.p.sar?.seq ?? null),
    parts.map((x) => x.p.messagePayload ?? null), parts.map((x) => x.m.notBefore),
    claim.instanceId, claim.leaseMs, parts.map((x) => x.claimed), parts.map((x) => x.m.client),
  ]);
  writeNewMessageEvents(tx, rows.filter((r) => r.m.events)
    .map(({ m, now }) => ({ route: m, payload: submittedEvent(m, target.batchId, now), at: now })));
}
