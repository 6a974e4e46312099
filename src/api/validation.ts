/**
 * The request bodies of the API as zod schemas (messaging-service-api.md §4.1), strict: only the
 * documented field names are accepted, and an unknown one (to, from, text) is a 400 that names
 * it. The same schemas feed /openapi.json, so the description cannot drift from the checks.
 * Optional fields may also be null (clients often send absent fields as null).
 */
import { z } from 'zod';
import { ALPHANUMERIC_MAX, INTERNATIONAL_MAX_DIGITS, SENDER_ID_RULE, checkSenderId, describeCharacter } from '../sms/sender-id.js';
import { MAX_VALIDITY_HOURS } from '../sms/smpp-time.js';
import { DELIVERY_STATUSES } from '../sms/status.js';
import { unpairedSurrogateAt } from '../sms/ucs2.js';
import { ApiError } from './errors.js';
import { NUMBER_PATTERN, NUMBER_PROBLEMS, checkNumber } from './numbers.js';
import { repeatSchema as repeat } from './recurrence.js';

/**
 * Free text a client gives that smppd stores, lists, logs or echoes (campaignName, the
 * regulatory ids, time, gmt, the queue's reference): at most this many characters each.
 */
export const FREE_TEXT_MAX = {
  campaignName: 255,
  /** peId, templateId, telemarketerId: registry ids are 30 characters at most in practice. */
  regulatory: 64,
  /** 'YYYY-MM-DD HH:mm:ss.SSS' is 23. */
  time: 32,
  /** An offset, UTC, or an IANA zone name (the longest is 32). */
  gmt: 64,
  reference: 255,
  /** resendDlr's filter: the longest source_addr SMPP v3.4 carries (§5.2.8, 21 octets with the NUL). */
  senderFilter: 20,
} as const;

export const FREE_TEXT_RULE = 'no control characters (U+0000–U+001F, U+007F–U+009F), line or paragraph separators (U+2028, U+2029), '
  + 'bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) or unpaired UTF-16 surrogates';

/**
 * Unicode's Bidi_Control characters: the marks (U+061C ALM, U+200E LRM, U+200F RLM), embeddings
 * and overrides (U+202A–U+202E) and isolates (U+2066–U+2069). Each can reorder what is shown
 * around it; a mark alone flips where neutral characters (digits, punctuation) land.
 */
function isBidiControl(c: number): boolean {
  return c === 0x061c || c === 0x200e || c === 0x200f || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

/**
 * The first character of `text` that free text may not hold, described for a message; null when
 * none. Control and bidirectional characters rewrite what an operator reads in a log line or a
 * listing; a lone surrogate is no character at all and breaks UTF-8 encoders downstream.
 */
export function freeTextProblem(text: string): string | null {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xa0 && c < 0x061c) continue;
    const bad = c < 0x20 || (c >= 0x7f && c < 0xa0) || c === 0x2028 || c === 0x2029 || isBidiControl(c);
    if (bad) return `must not hold ${describeCharacter(text, i)} (character ${i + 1}): ${FREE_TEXT_RULE}`;
    if (c < 0xd800 || c > 0xdfff) continue;
    const next = text.charCodeAt(i + 1);
    if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      i++; // a whole pair: one character outside the BMP
      continue;
    }
    return `must not hold an unpaired UTF-16 surrogate (${describeCharacter(text, i)}, character ${i + 1}): ${FREE_TEXT_RULE}`;
  }
  return null;
}

function typeError(expected: string) {
  return (issue: { input?: unknown }): string => (issue.input === undefined || issue.input === null ? 'is required' : `must be ${expected}`);
}

const str = () => z.string({ error: typeError('a string') });
const whole = (min: number, max: number) => {
  const error = `must be a whole number from ${min} to ${max}`;
  return z.number({ error: typeError('a number') }).int({ error }).min(min, { error }).max(max, { error });
};
const bool = () => z.boolean({ error: typeError('true or false') });
const messageTypeSchema = z.enum(['TEXT', 'UNICODE'], { error: (i) => (i.input === undefined ? 'is required' : 'must be TEXT (GSM-7) or UNICODE') });

/** Free text of at most `max` characters by the rule of `freeTextProblem`. */
export function freeText(max: number) {
  return str().max(max, { error: `must be at most ${max} characters` }).superRefine((t, ctx) => {
    const problem = freeTextProblem(t);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  });
}

const senderId = str().superRefine((id, ctx) => {
  const checked = checkSenderId(id);
  if (!checked.ok) ctx.addIssue({ code: 'custom', message: checked.problem });
}).meta({
  description: `Approved sender ID, sent as source_addr: ${SENDER_ID_RULE}. Its kind sets source_addr_ton/npi `
    + '(alphanumeric 5/0, a number 1/1, a short code 3/0 unless the upstream says otherwise).',
  maxLength: Math.max(ALPHANUMERIC_MAX, INTERNATIONAL_MAX_DIGITS),
  examples: ['MyBrand', '447700900123', '12345'],
});
const destinationNumber = str().superRefine((n, ctx) => {
  const problem = checkNumber(n);
  if (problem !== null) ctx.addIssue({ code: 'custom', message: NUMBER_PROBLEMS[problem] });
}).meta({ description: 'Country code plus number, digits only: no +, no 00, no spaces, no leading zero (E.164 without the +).', pattern: NUMBER_PATTERN, examples: ['447700900123'] });
const message = str().min(1, { error: 'must not be empty' }).superRefine((text, ctx) => {
  const at = unpairedSurrogateAt(text);
  if (at >= 0) {
    ctx.addIssue({ code: 'custom', message: `holds an unpaired UTF-16 surrogate (${describeCharacter(text, at)}) at character ${at + 1}: half of a pair is no character, and no encoding carries it` });
  }
}).meta({ description: 'The text. Every UTF-16 surrogate in it is half of a pair (an unpaired one is refused).' });
const messageType = messageTypeSchema.meta({ description: 'TEXT sends GSM-7 and refuses other characters; UNICODE sends UCS-2.' });
const count = () => whole(0, 1_000_000).nullish();
const expiryHour = whole(1, MAX_VALIDITY_HOURS).nullish().meta({ description: 'Validity in hours: the SMSC stops trying after it, and smppd does not submit after it.' });
const textRule = (max: number): string => `At most ${max} characters; ${FREE_TEXT_RULE}.`;
const campaignName = freeText(FREE_TEXT_MAX.campaignName).nullish()
  .meta({ description: `Reporting label, stored with the batch and listed. ${textRule(FREE_TEXT_MAX.campaignName)}` });
const time = freeText(FREE_TEXT_MAX.time).nullish()
  .meta({ pattern: '^(\\d{4}-\\d{2}-\\d{2}[T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,3})?)?)?$', description: `Scheduled local date-time 'YYYY-MM-DD HH:mm[:ss]' (or with T) in the offset gmt; needs the schedule flag true. ${textRule(FREE_TEXT_MAX.time)}` });
const gmt = freeText(FREE_TEXT_MAX.gmt).nullish()
  .meta({ description: `Offset of time, such as +04:00 (or UTC, or an IANA zone). Default +00:00. ${textRule(FREE_TEXT_MAX.gmt)}` });
/** sendSms's `delay`: seconds before the message goes, at most a week (a later send is a schedule). */
export const SEND_DELAY_MAX_SECONDS = 604_800;
/** sendbulk's `delay`: seconds between the batch's messages, at most an hour. */
export const BULK_DELAY_MAX_SECONDS = 3_600;
const seconds = (max: number) => {
  const error = `must be a number of seconds from 0 to ${max}`;
  return z.number({ error: typeError('a number') }).min(0, { error }).max(max, { error });
};
const sendDelay = seconds(SEND_DELAY_MAX_SECONDS).nullish().meta({
  description: `Seconds before the message is released, 0 to ${SEND_DELAY_MAX_SECONDS} (a week), to the millisecond. A message with a delay `
    + 'is a schedule of one: listed by /sms/listSchedule until it goes, and it can be sent now or aborted. With isSchedule, counted from time.',
});
const bulkDelay = seconds(BULK_DELAY_MAX_SECONDS).nullish().meta({
  description: `Seconds between the batch's messages, 0 to ${BULK_DELAY_MAX_SECONDS}, to the millisecond: each goes that long after the previous `
    + 'one was taken for sending. Only this batch is slowed; 0 or absent: as fast as the binds allow.',
});
const REGULATORY_DESCRIPTIONS = {
  peId: 'Principal entity id (India DLT).',
  templateId: 'Registered content template id (India DLT).',
  telemarketerId: 'Telemarketer id (India DLT).',
} as const;
const regulatory = (field: keyof typeof REGULATORY_DESCRIPTIONS) => freeText(FREE_TEXT_MAX.regulatory).nullish()
  .meta({
    description: `${REGULATORY_DESCRIPTIONS[field]} smppd: sent on every part in the TLV its upstream assigns (upstreams[].regulatoryTlvs), `
      + 'as a C-Octet String of printable ASCII; required where the upstream sets requireRegulatory; not sent to an upstream without a tag for it. '
      + textRule(FREE_TEXT_MAX.regulatory),
  });

/** POST /sms/sendSms body. */
export const sendSmsSchema = z.strictObject({
  senderId,
  destinationNumber,
  message,
  messageType,
  charCount: count().meta({ description: 'From /sms/identify; informational.' }),
  smsParts: count().meta({ description: 'From /sms/identify; informational.' }),
  charLimit: count().meta({ description: 'From /sms/identify; informational.' }),
  expiryHour,
  campaignName,
  isSchedule: bool().nullish().meta({ description: 'true to schedule at time.' }),
  time,
  gmt,
  repeat,
  delay: sendDelay,
  peId: regulatory('peId'),
  templateId: regulatory('templateId'),
  telemarketerId: regulatory('telemarketerId'),
});
export type SendSmsBody = z.output<typeof sendSmsSchema>;

/** sendbulk's bulkRequest part (a JSON string). */
export const bulkRequestSchema = z.strictObject({
  senderId,
  message,
  messageType,
  campaignName,
  allowDuplicate: bool().nullish().meta({ description: 'false (the default) removes repeated numbers from the file.' }),
  expiryHour,
  delay: bulkDelay,
  schedule: bool().nullish().meta({ description: 'true to schedule at time (time, gmt and repeat as in sendSms).' }),
  time,
  gmt,
  repeat,
  smsParts: count(),
  charCount: count(),
  charLimit: count(),
  peId: regulatory('peId'),
  templateId: regulatory('templateId'),
  telemarketerId: regulatory('telemarketerId'),
});
export type BulkRequest = z.output<typeof bulkRequestSchema>;

/** POST /sms/identify body. */
export const identifySchema = z.strictObject({
  message: str().meta({ description: 'The text to analyse.' }),
  destinationNumber: destinationNumber.optional().meta({
    description: 'smppd: the number the text would go to; the answer is for the upstream its route would take now (its alphabet, shift tables and long-message mode). Without it: the route of any number for this client.',
  }),
});

const idValue = z.union([z.number().int().min(1), z.string().regex(/^[1-9]\d{0,15}$/)], { error: 'must be a whole number ≥ 1' });
/** POST /sms/send-now body (when the id is not in the query). */
export const sendNowSchema = z.strictObject({ scheduleId: idValue.meta({ description: 'The id from /sms/listSchedule.' }) });

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * A resendDlr bound: a UTC day `YYYY-MM-DD` (the whole day), or an instant in ISO 8601 with its
 * zone. `{ start, end }` in ms: the day's first and the next day's first ms, or the instant and
 * the ms after it.
 */
export function parseDateBound(text: string): { start: number; end: number } | null {
  const day = DATE.exec(text);
  if (day) {
    const start = utcDay(text);
    return start === null ? null : { start, end: start + 86_400_000 };
  }
  // Date.parse moves 2026-02-30T… to March: the day is checked on its own first.
  if (!DATE_TIME.test(text) || utcDay(text.slice(0, 10)) === null) return null;
  const at = Date.parse(text.replace(' ', 'T'));
  return Number.isNaN(at) ? null : { start: at, end: at + 1 };
}

/** Midnight UTC of a real calendar day `YYYY-MM-DD`; null for 2026-02-30 and the like. */
function utcDay(text: string): number | null {
  const day = DATE.exec(text);
  if (!day) return null;
  const start = Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3]));
  return new Date(start).toISOString().slice(0, 10) === text ? start : null;
}

const dateBound = (description: string) => str().refine((t) => parseDateBound(t) !== null, {
  error: 'must be a date YYYY-MM-DD (a whole UTC day) or an ISO 8601 date-time with its zone',
}).meta({ description, pattern: '^\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,3})?)?(Z|[+-]\\d{2}:\\d{2}))?$', examples: ['2026-11-01', '2026-11-01T08:00:00+04:00'] });

/** POST /sms/resendDlr body (API §4.1: startDate, endDate, senderId, messageStatus). */
export const resendDlrSchema = z.strictObject({
  startDate: dateBound('Messages sent from this day (UTC) or instant on.'),
  endDate: dateBound('Up to the end of this day (UTC), or up to this instant.'),
  // Not the sender rule of a send: messages stored before it may carry senders it refuses.
  senderId: freeText(FREE_TEXT_MAX.senderFilter).min(1, { error: 'must not be empty' }).nullish()
    .meta({ description: `Only messages sent from this sender ID. ${textRule(FREE_TEXT_MAX.senderFilter)}` }),
  messageStatus: z.enum(DELIVERY_STATUSES, { error: `must be one of ${DELIVERY_STATUSES.join(', ')}` }).nullish()
    .meta({ description: 'Only messages whose current status is this one.' }),
});
export type ResendDlrBody = z.output<typeof resendDlrSchema>;

/** POST /events/dead/resend body: some dead events by id, or all of them. */
export const deadResendSchema = z.strictObject({
  ids: z.array(z.number({ error: 'must be a list of event ids' }).int({ error: 'must be a list of event ids' }).min(1, { error: 'must be a list of event ids' }),
    { error: 'must be a list of event ids' }).min(1, { error: 'must list at least one id; use all: true for every dead event' }).max(10_000, { error: 'must list at most 10000 ids' })
    .nullish().meta({ description: 'The ids of GET /events/dead.' }),
  all: bool().nullish().meta({ description: 'true: every dead event of the client.' }),
}).refine((b) => (b.ids != null) !== (b.all === true), { error: 'give ids, or all: true, not both', path: ['ids'] });

/** Field names people bring from other SMS APIs, and the one this API uses. */
const INSTEAD: Readonly<Record<string, string>> = {
  to: 'destinationNumber', from: 'senderId', text: 'message', body: 'message', sender: 'senderId', type: 'messageType',
  destination: 'destinationNumber', destinationNo: 'destinationNumber', scheduled: 'isSchedule', scheduleTime: 'time',
};

/**
 * Validates `input` or throws VALIDATION with every problem, one `field: reason` each, in the
 * order of the fields. `prefix` names the container ('bulkRequest.').
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, prefix = '', what = 'the body'): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const problems: string[] = [];
  for (const issue of parsed.error.issues) {
    const path = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const hint = INSTEAD[key];
        problems.push(`${prefix}${path === '' ? '' : `${path}.`}${key}: unknown field${hint ? `; this API calls it ${hint}` : ''}`);
      }
    } else if (path === '') {
      problems.push(`${what} must be a JSON object`);
    } else {
      problems.push(`${prefix}${path}: ${issue.message}`);
    }
  }
  throw new ApiError('VALIDATION', problems.join('; '));
}

/** An id in the query (`batch_Id`, `scheduleId`) as `toId` reads it; /openapi.json describes them by it. */
export const queryIdSchema = z.int().min(1).max(Number.MAX_SAFE_INTEGER);

/** A whole-number id from the query (`batch_Id`, `scheduleId`); VALIDATION when missing or not one. */
export function queryId(query: unknown, name: string): number {
  const value = (query as Record<string, unknown> | undefined)?.[name];
  return toId(value, name);
}

export function toId(value: unknown, name: string): number {
  if (value === undefined || value === '') throw new ApiError('VALIDATION', `${name}: is required`);
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string' || !/^[1-9]\d{0,15}$/.test(text) || !queryIdSchema.safeParse(Number(text)).success) {
    throw new ApiError('VALIDATION', `${name}: must be a whole number ≥ 1`);
  }
  return Number(text);
}
