/**
 * A validated sendSms body as dispatch's acceptor takes it: the one mapping of the HTTP and the
 * queue ingress (messaging-service-api.md §4.1).
 */
import type { SendRequest } from '../dispatch/accept.js';
import { REGULATORY_FIELDS, type RegulatoryIds } from '../sms/regulatory.js';
import { delayedSchedule, scheduleFrom } from './schedule-time.js';
import type { SendSmsBody } from './validation.js';

/**
 * `now`: wall ms, for the schedule's "not in the past" check. Throws VALIDATION (ApiError) for a
 * schedule that is inconsistent or in the past.
 */
export function sendRequestFrom(client: string, body: SendSmsBody, now: number): SendRequest {
  const scheduled = scheduleFrom({ flag: body.isSchedule, time: body.time, gmt: body.gmt, repeat: body.repeat }, 'isSchedule', '', now);
  const schedule = delayedSchedule(scheduled, body.delay, now);
  // charCount, smsParts and charLimit are accepted and not used: smppd counts parts itself.
  const regulatory = regulatoryFrom(body);
  return {
    client,
    senderId: body.senderId,
    destination: body.destinationNumber,
    message: body.message,
    messageType: body.messageType,
    ...(body.expiryHour != null ? { expiryHour: body.expiryHour } : {}),
    ...(body.campaignName != null ? { campaignName: body.campaignName } : {}),
    ...(schedule ? { schedule } : {}),
    ...(regulatory ? { regulatory } : {}),
  };
}

/**
 * The regulatory ids a sendSms body or a bulkRequest gives; undefined when none. A null or empty
 * field is not given: clients of the provider's API send "" for the ids they do not use.
 */
export function regulatoryFrom(body: Partial<Record<(typeof REGULATORY_FIELDS)[number], string | null>>): RegulatoryIds | undefined {
  const ids: RegulatoryIds = {};
  for (const field of REGULATORY_FIELDS) {
    const id = body[field];
    if (id != null && id !== '') ids[field] = id;
  }
  return Object.keys(ids).length > 0 ? ids : undefined;
}
