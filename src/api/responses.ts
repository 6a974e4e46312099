/**
 * What the HTTP API answers and what it POSTs to webhooks, as zod schemas: the view code is typed
 * by them (`z.output`), and /openapi.json is generated from them (ingress/http/openapi.ts), so
 * the description cannot drift from the replies. Nothing parses a reply at run time: the schemas
 * are the types, and the OpenAPI test validates recorded replies against the document.
 *
 * Times: §2.4's createdOn is an ISO 8601 date-time without zone, written in UTC; the shapes smppd
 * defines use ISO 8601 UTC with the Z (`isoUtc`).
 */
import { z } from 'zod';
import { MAX_REPEAT_COUNT, REPEAT_EVERY } from '../core/recurrence.js';
import type { IdentifyResult } from '../sms/identify.js';
import type { Receipt } from '../sms/receipt.js';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../sms/status.js';
import { DECODE_PROBLEMS } from '../sms/text-codec.js';
import { API_ERRORS, type ApiErrorCode, type ErrorBody } from './errors.js';
import { NUMBER_PROBLEMS, type NumberProblem } from './numbers.js';

/** Every schema with an `id` here is a named component of /openapi.json. */
export const responseSchemas = z.registry<{ id: string }>();
function named<S extends z.ZodType>(id: string, schema: S): S {
  responseSchemas.add(schema, { id });
  return schema;
}

/** `2026-01-01T10:00:00.000Z`. */
const utc = (description?: string) => z.iso.datetime().meta(description === undefined ? {} : { description });
const int = () => z.int();
const count = () => z.int().min(0);
const status = z.enum(DELIVERY_STATUSES as readonly [DeliveryStatus, ...DeliveryStatus[]]);
const encoding = z.enum(['GSM-7', 'UNICODE']);

/** The five-field body of every refusal (messaging-service-api.md §7), but the client API's 401. */
export const errorBodySchema = named('ErrorBody', z.object({
  status: z.int().min(400).max(599).meta({ description: 'The HTTP status.' }),
  error: z.string().meta({ description: 'The reason phrase.' }),
  message: z.string().meta({ description: 'For people: log it, do not parse it.' }),
  errorCode: z.enum(Object.keys(API_ERRORS) as [ApiErrorCode, ...ApiErrorCode[]]).meta({ description: 'Stable: branch on it after the status. New values may appear.' }),
  requestUri: z.string().meta({ description: 'The path of the failing request (no query); empty when its headers were never read whole.' }),
}).meta({ description: 'Every refusal but the client API\'s 401 (messaging-service-api.md §7); the admin API\'s 401 too.' }));

/** The gateway's 401 (§5, §7). */
export const unauthorizedBodySchema = named('UnauthorizedBody', z.object({ error: z.string(), message: z.string() })
  .meta({ description: 'A missing or invalid bearer token (§5, §7).' }));

export const identifyResultSchema = named('IdentifyResult', z.object({
  message: z.string().meta({ description: 'The text, echoed.' }),
  messageType: encoding,
  smscount: z.int().min(1).meta({ description: 'Parts the text makes; smsParts in a send.' }),
  charCount: count().meta({ description: 'GSM-7: septets (an extension character counts 2); UNICODE: UTF-16 code units.' }),
  charLimit: z.int().min(1).meta({ description: 'Characters per part: 160 or 153 for GSM-7, 70 or 67 for UNICODE with the default tables and 8-bit UDH.' }),
}));

export const bulkListInfoSchema = z.object({
  total: count().meta({ description: 'Number lines read: validCount + invalidCount + duplicate.' }),
  validCount: count(),
  invalidCount: count(),
  duplicate: count().meta({ description: 'Repeats removed (allowDuplicate false).' }),
  errors: z.strictObject(Object.fromEntries(Object.keys(NUMBER_PROBLEMS).map((k) => [k, count().optional()])) as Record<NumberProblem, z.ZodOptional<z.ZodInt>>)
    .meta({ description: 'Invalid lines by reason; only reasons that occurred.' }),
});

/** §2.3. */
export const bulkResponseSchema = named('BulkResponse', z.object({
  status: z.literal('success'),
  bulkSessionId: z.string().regex(/^[1-9]\d*$/).meta({ description: 'The batch id (batch_Id of the control calls), as a string.' }),
  credits: z.string().regex(/^\d+$/).meta({ description: 'The parts the batch will cost: each valid number\'s segments (by its route), summed. smppd keeps no balance.' }),
  deductcredits: z.string().regex(/^\d+$/).meta({ description: 'The same as credits: what the batch costs, in parts.' }),
  bulkListInfo: bulkListInfoSchema,
}));

/** The store's BatchState (views.ts holds them together). */
export const BATCH_STATES = ['active', 'paused', 'aborted'] as const;

/** GET /sms/list entry (§2.4): its fields exactly. */
export const batchListEntrySchema = named('BatchListEntry', z.object({
  id: z.int().min(1).meta({ description: 'Pass as batch_Id.' }),
  senderId: z.string(),
  reqType: z.string().meta({ description: 'single (a scheduled sendSms) or bulk (sendbulk).', examples: ['single', 'bulk'] }),
  messageType: z.string().meta({ description: 'The encoding: GSM-7 or UNICODE.', examples: ['GSM-7', 'UNICODE'] }),
  campaignName: z.string(),
  total: count(),
  processed: count(),
  pending: count(),
  active: z.boolean().meta({ description: 'true while the batch runs; false when paused or aborted.' }),
  createdOn: z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/).meta({ description: 'ISO 8601 date-time without zone, in UTC (§2.4).', examples: ['2026-01-01T10:00:00'] }),
}));

/** GET /sms/edit, and the answer of pause, resume and abort: the list entry with its state. */
export const batchDetailSchema = named('BatchDetail', batchListEntrySchema.extend({
  state: z.enum(BATCH_STATES),
  scheduleId: z.int().min(1).nullable().meta({ description: 'The schedule that holds the batch, or null.' }),
}));

/** The store's ScheduleState (views.ts holds them together). */
export const SCHEDULE_STATES = ['scheduled', 'released', 'cancelled'] as const;

/**
 * GET /sms/listSchedule entry, and the answer of send-now and abort/schedule. A new field is one
 * line here (with its description), and one in views.ts's `scheduleEntry`, which the type holds to it.
 */
export const scheduleEntrySchema = named('ScheduleEntry', z.object({
  id: z.int().min(1).meta({ description: 'Pass as scheduleId.' }),
  batchId: z.int().min(1),
  state: z.enum(SCHEDULE_STATES).meta({
    description: 'scheduled → released (send-now, or its time came) | cancelled (abort/schedule; its batch is then aborted). A recurring one is scheduled until its last run.',
  }),
  time: utc('When it releases its messages, as planned (UTC): a recurring schedule\'s next run.'),
  repeat: z.object({
    every: z.enum(REPEAT_EVERY),
    count: z.int().min(1).max(MAX_REPEAT_COUNT).nullable().meta({ description: 'Runs in all, the first included; null: until aborted (or until).' }),
    until: utc('No run after this instant (UTC).').nullable(),
    gmt: z.string().meta({ description: 'The zone whose local time the runs keep.' }),
  }).nullable().meta({ description: 'The series, normalised; null for a schedule of one run.' }),
  runs: count().meta({ description: 'Runs released so far (send-now included).' }),
  lastRun: utc('When a run was last released: its time came, or a send-now (UTC).').nullable(),
  senderId: z.string().nullable(),
  campaignName: z.string().nullable(),
  total: count().nullable(),
  createdAt: utc(),
}));

const partStatusSchema = z.object({ part: z.int().min(1), status, smscMessageId: z.string().nullable() });

/** GET /sms/status/{messageId}. */
export const messageStatusSchema = named('MessageStatus', z.object({
  messageId: z.string(),
  status: status.meta({ description: 'New values may appear: do not fail on one you do not know.' }),
  reason: z.string().nullable(),
  createdAt: utc(),
  updatedAt: utc(),
  batchId: z.int().min(1).nullable(),
  destination: z.string(),
  parts: z.array(partStatusSchema),
}));

/** A delivery receipt as read (sms/receipt.ts), in a status event. */
export const receiptSchema = named('Receipt', z.object({
  id: z.string().nullable().meta({ description: 'The message id, raw as written: receipted_message_id when present, else the text\'s id:.' }),
  stat: z.string().nullable().meta({ description: 'The stat word, upper-cased (DELIVRD, UNDELIV …): from message_state when present, else the text\'s stat:. Unknown words kept.' }),
  err: z.string().nullable().meta({ description: 'The text\'s err: as written (\'034\').' }),
  sub: z.string().nullable(),
  dlvrd: z.string().nullable(),
  submitDate: utc('From the SMSC\'s local time, by the upstream\'s timeZone.').nullable(),
  doneDate: utc().nullable(),
  text: z.string().nullable().meta({ description: 'Everything after text: as written; null when there is no text:.' }),
  networkError: z.object({
    type: int().meta({ description: 'Network type: 1 ANSI-136, 2 IS-95, 3 GSM (SMPP v3.4 §5.3.2.31).' }),
    code: int(),
  }).optional().meta({ description: 'The network_error_code TLV, when the receipt has one.' }),
  raw: z.string().meta({ description: 'The receipt text as Latin-1.' }),
  warnings: z.array(z.string()).meta({ description: 'What was missing, unreadable or contradictory; empty for a clean receipt.' }),
}).meta({ description: 'The delivery receipt that caused the change, as read: its raw text and fields.' }));

/** What smppd POSTs to a webhook when a message's status changes. */
export const statusEventSchema = named('StatusEvent', z.object({
  type: z.literal('status'),
  messageId: z.string().meta({ description: 'The id sendSms answered (or one message of a sendbulk). Deduplicate by messageId and status.' }),
  channel: z.literal('sms'),
  destination: z.string(),
  status: status.meta({ description: 'The message\'s status after the change. New values may appear.' }),
  timestamp: utc('When the change happened (UTC).'),
  reason: z.string().nullable().meta({ description: 'Why a message FAILED or was REJECTED (ESME_R name and code, or receipt stat and err).' }),
  batchId: z.int().min(1).nullable(),
  part: partStatusSchema.nullable().meta({ description: 'The part whose change moved the message; null for SUBMITTED.' }),
  parts: z.int().min(1).meta({ description: 'How many parts the message has.' }),
  smscMessageId: z.string().nullable().meta({ description: 'The SMSC\'s id of that part.' }),
  receipt: receiptSchema.nullable(),
  resent: z.literal(true).optional().meta({ description: 'Present on a re-push by POST /sms/resendDlr.' }),
}).meta({ description: 'One change of a message\'s status. A message\'s events arrive in order, one at a time; a status never arrives after a later one.' }));

/** What smppd POSTs to a webhook when an inbound (MO) message arrives. */
export const inboundEventSchema = named('InboundEvent', z.object({
  type: z.literal('inbound'),
  channel: z.literal('sms'),
  inboundId: z.int().min(1).meta({ description: 'smppd\'s id of the stored message: deduplicate by it.' }),
  source: z.string().meta({ description: 'The sender\'s number.' }),
  destination: z.string().meta({ description: 'Your number or short code it was sent to.' }),
  text: z.string().meta({ description: 'Decoded by dataCoding (binary data: lowercase hex). A best effort when malformed.' }),
  receivedAt: utc('When its last part came (UTC).'),
  parts: z.int().min(1).meta({ description: 'Parts it arrived in.' }),
  missingParts: z.array(z.int().min(1))
    .meta({ description: 'Sequence numbers of parts that never came: it was stored after waiting 10 minutes for them. Empty when whole.' }),
  dataCoding: z.int().min(0).max(255).meta({ description: 'SMPP data_coding of its (first) part.' }),
  malformed: z.boolean().meta({ description: 'True when its bytes could not be decoded cleanly: problems says how, userData has the bytes.' }),
  problems: z.array(z.enum(DECODE_PROBLEMS)).meta({
    description: 'UDH_INVALID: the UDH its esm_class announced runs past the data (the whole user data was read as text); '
      + 'UCS2_ODD_LENGTH; UCS2_UNPAIRED_SURROGATE; INVALID_BYTES: an octet its alphabet does not have, or a NUL (U+FFFD in text). Empty unless malformed. New values may appear.',
  }),
  userData: z.string().regex(/^([0-9a-f]{2})*$/).nullable()
    .meta({ description: 'With malformed: the user data as it came (UDHs removed where they could be read), parts in order, lowercase hex; else null.' }),
}).meta({ description: 'An inbound (MO) message, reassembled when it came in parts.' }));

/** GET /events/dead. */
export const deadEventListSchema = named('DeadEventList', z.object({
  events: z.array(z.object({
    id: z.int().min(1).meta({ description: 'Pass to POST /events/dead/resend.' }),
    kind: z.enum(['status', 'inbound']),
    messageId: z.string().nullable(),
    createdAt: utc(),
    diedAt: utc(),
    attempts: count(),
    lastError: z.string().nullable(),
    event: z.union([statusEventSchema, inboundEventSchema]).meta({ description: 'The body that was being delivered.' }),
  })),
  next: z.int().min(1).nullable().meta({ description: 'Pass as after= for the next page; null on the last.' }),
}));

export const resendDlrResultSchema = z.object({ queued: count().meta({ description: 'Status events queued.' }) });
export const deadResendResultSchema = z.object({ requeued: count(), superseded: count() });

export const aliveSchema = z.object({ status: z.literal('ok') });
const upstreamReadiness = z.object({
  name: z.string(),
  available: z.boolean().meta({ description: 'A bind bound and not suspended: a send may go there now.' }),
  bound: count(),
  binds: count(),
  suspended: z.literal(true).optional().meta({ description: 'Present when an operator suspended it.' }),
});
export const readySchema = z.object({ status: z.literal('ready'), upstreams: z.array(upstreamReadiness) });
export const notReadySchema = z.object({ status: z.literal('not ready'), reasons: z.array(z.string()), upstreams: z.array(upstreamReadiness) });

/** Fails to compile when A and B differ (readonly aside): for the types the schemas describe but do not define. */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const agree: [Same<z.output<typeof identifyResultSchema>, IdentifyResult>, Same<z.output<typeof receiptSchema>, Receipt>, Same<z.output<typeof errorBodySchema>, ErrorBody>] = [true, true, true];
void agree;
