/**
 * The delivery status model of DESIGN.md ("Delivery status model") and of the messaging
 * service's API §3.1: what a submit_sm_resp or a receipt means for a message, how a new status
 * merges with the stored one, and the status of a message of several parts. Pure.
 *
 * Which command_status is permanent is decided in one place, the smpp layer's table
 * (`src/smpp/command-status.ts`); the domain sits below it and takes the code already classified.
 */

export type DeliveryStatus = 'SUBMITTED' | 'SENT' | 'DELIVERED' | 'READ' | 'FAILED' | 'REJECTED';

export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['SUBMITTED', 'SENT', 'DELIVERED', 'READ', 'FAILED', 'REJECTED'];

/** Progress along the successful path; FAILED and REJECTED are ends beside it, not on it. */
const RANK = { SUBMITTED: 0, SENT: 1, DELIVERED: 2, READ: 3 } as const;
type PathStatus = keyof typeof RANK;

const isOnPath = (s: DeliveryStatus): s is PathStatus => Object.hasOwn(RANK, s);

/** DELIVERED, READ, FAILED and REJECTED: the first of these to arrive stays (READ may follow DELIVERED). */
export function isFinal(s: DeliveryStatus): boolean {
  return s !== 'SUBMITTED' && s !== 'SENT';
}

export function isDeliveryStatus(s: string): s is DeliveryStatus {
  return (DELIVERY_STATUSES as readonly string[]).includes(s);
}

/** What a submit_sm_resp means for the part. `reason` names the code: 'ESME_RINVDSTADR (0x0000000B)'. */
export type SubmitRespOutcome =
  | { status: 'SENT' }
  | { status: 'REJECTED'; reason: string }
  /** No change: 'retry' codes are sent again with backoff; 'fail' codes are the bind's fault, not the message's. */
  | { status: null; class: 'retry' | 'fail'; reason: string };

/** A command_status with its name and class, as the smpp layer's table (`classify`) gives them. */
export interface ClassifiedStatus {
  code: number;
  name: string;
  class: 'ok' | 'retry' | 'reject' | 'fail';
}

/** The name and code of a command_status, as a reason: 'ESME_RTHROTTLED (0x00000058)'. */
export function commandStatusReason(s: ClassifiedStatus): string {
  const hex = (s.code >>> 0).toString(16).toUpperCase().padStart(8, '0');
  return `${s.name} (0x${hex})`;
}

/**
 * A submit_sm_resp's command_status (SMPP v3.4 §5.1.3) by its class: ok → SENT; reject →
 * REJECTED; retry and fail → no change (the dispatcher retries, or the bind stops and the part
 * waits for another bind).
 */
export function statusFromSubmitResp(s: ClassifiedStatus): SubmitRespOutcome {
  switch (s.class) {
    case 'ok':
      return { status: 'SENT' };
    case 'reject':
      return { status: 'REJECTED', reason: commandStatusReason(s) };
    case 'retry':
    case 'fail':
      return { status: null, class: s.class, reason: commandStatusReason(s) };
  }
}

/** FAILED when the retries of a transient code are used up: 'retries exhausted: ESME_RTHROTTLED (0x00000058)'. */
export function retriesExhausted(last: ClassifiedStatus): { status: 'FAILED'; reason: string } {
  return { status: 'FAILED', reason: `retries exhausted: ${commandStatusReason(last)}` };
}

/** What a receipt means for the part; status null: unrecognised, stored raw, no change. */
export type ReceiptOutcome = { status: DeliveryStatus; reason: string | null } | { status: null };

/**
 * Receipt stat words: the abbreviations of SMPP v3.4 Appendix B, and the full message_state
 * names of §5.2.28, which some SMSCs write instead. READ is no SMPP value, but SMSCs that
 * relay read reports send it.
 */
const STAT_STATUS: Readonly<Record<string, DeliveryStatus>> = {
  ENROUTE: 'SENT',
  ACCEPTD: 'SENT',
  ACCEPTED: 'SENT',
  DELIVRD: 'DELIVERED',
  DELIVERED: 'DELIVERED',
  READ: 'READ',
  UNDELIV: 'FAILED',
  UNDELIVERABLE: 'FAILED',
  EXPIRED: 'FAILED',
  DELETED: 'FAILED',
  UNKNOWN: 'FAILED',
  REJECTD: 'REJECTED',
  REJECTED: 'REJECTED',
};

/**
 * A receipt's stat (any case) and err (as written): ENROUTE, ACCEPTD → SENT; DELIVRD →
 * DELIVERED; READ → READ; UNDELIV, EXPIRED, DELETED, UNKNOWN → FAILED; REJECTD → REJECTED.
 * FAILED and REJECTED carry the reason 'stat:UNDELIV err:034' ('stat:UNDELIV' without err).
 * Anything else (BUFFRED, ACKED, a null stat) → status null.
 */
export function statusFromReceipt(stat: string | null, err: string | null): ReceiptOutcome {
  const word = stat?.trim().toUpperCase() ?? '';
  const status = Object.hasOwn(STAT_STATUS, word) ? STAT_STATUS[word] : undefined;
  if (status === undefined) return { status: null };
  const failed = status === 'FAILED' || status === 'REJECTED';
  return { status, reason: failed ? `stat:${word}${err === null ? '' : ` err:${err}`}` : null };
}

/** Why an incoming status changed nothing. */
export type IgnoredReason = 'duplicate' | 'regression' | 'after_final';

export interface MergeResult {
  /** The status after the merge. */
  status: DeliveryStatus;
  changed: boolean;
  /**
   * - duplicate: the same status again.
   * - regression: a status behind the current one on SUBMITTED < SENT < DELIVERED < READ
   *   (SENT after DELIVERED, SENT after FAILED, DELIVERED after READ).
   * - after_final: another final status after a final one (FAILED after DELIVERED, DELIVERED
   *   after REJECTED, REJECTED after FAILED): the first final status wins.
   */
  ignored?: IgnoredReason;
}

/**
 * Merges an incoming status into the stored one (DESIGN.md merge rules): a status never moves
 * back; the first final status wins, except READ after DELIVERED; the same status twice is a
 * no-op. Statuses arrive out of order (API §3.1 rule 1), so the ignored ones are reported, not
 * errors.
 */
export function mergeStatus(current: DeliveryStatus, incoming: DeliveryStatus): MergeResult {
  if (incoming === current) return { status: current, changed: false, ignored: 'duplicate' };
  if (!isFinal(current)) {
    // current is SUBMITTED or SENT: everything but SUBMITTED after SENT moves forward
    if (incoming === 'SUBMITTED') return { status: current, changed: false, ignored: 'regression' };
    return { status: incoming, changed: true };
  }
  if (current === 'DELIVERED' && incoming === 'READ') return { status: incoming, changed: true };
  const behind = !isFinal(incoming) || (current === 'READ' && incoming === 'DELIVERED');
  return { status: current, changed: false, ignored: behind ? 'regression' : 'after_final' };
}

/**
 * The status of a message of several parts (DESIGN.md): REJECTED if any part is, else FAILED if
 * any part is (so the result does not depend on which arrived first); READ when every part is
 * READ; DELIVERED when every part is DELIVERED or READ; otherwise the least advanced status of
 * the parts. No parts: SUBMITTED.
 */
export function aggregateStatus(parts: readonly DeliveryStatus[]): DeliveryStatus {
  if (parts.includes('REJECTED')) return 'REJECTED';
  if (parts.includes('FAILED')) return 'FAILED';
  let least: PathStatus | null = null;
  for (const p of parts) {
    if (isOnPath(p) && (least === null || RANK[p] < RANK[least])) least = p;
  }
  return least ?? 'SUBMITTED';
}
