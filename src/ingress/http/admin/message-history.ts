/**
 * A message's history as the admin API tells it, derived from what the store keeps (nothing is
 * logged twice to tell it): accepted (the message's time), each part sent (the SMSC accepted it)
 * or ended by smppd or by the SMSC's refusal, each receipt as it came (the ignored ones too), and
 * the message's final status. In time order; at one instant, in that order.
 */
import { isFinal } from '../../../sms/status.js';
import type { MessageStory } from '../../../store/message-search.js';

export type HistorySource = 'accept' | 'submit' | 'receipt' | 'local';

export interface HistoryEntry {
  /** ISO 8601. */
  at: string;
  /** The part it concerns; null for the message as a whole. */
  part: number | null;
  /** The status it brought (null: a receipt whose word smppd does not know; it changed nothing). */
  status: string | null;
  reason: string | null;
  source: HistorySource;
}

/** A submit_sm_resp's command_status, as reasons name it: `ESME_RINVDSTADR (0x0000000B)`. */
const COMMAND_STATUS = /\(0x[0-9A-Fa-f]{8}\)/;

export function messageHistory(story: MessageStory): HistoryEntry[] {
  const entries: Array<{ at: number; rank: number; entry: Omit<HistoryEntry, 'at'> }> = [];
  const add = (at: number, rank: number, entry: Omit<HistoryEntry, 'at'>): void => { entries.push({ at, rank, entry }); };
  const m = story.message;
  add(m.acceptedAt, 0, { part: null, status: 'SUBMITTED', reason: null, source: 'accept' });
  const receiptsOf = new Set(story.receipts.map((r) => r.part));
  for (const p of story.parts) {
    if (p.sentAt !== null) add(p.sentAt, 1, { part: p.part, status: 'SENT', reason: null, source: 'submit' });
    // Ended without an SMSC id: the SMSC refused it (its command_status is the reason), or smppd
    // ended it (expired, aborted, uncertain…). With a receipt, the receipt tells the end.
    if (p.state === 'done' && p.smscId === null && isFinal(p.status) && !receiptsOf.has(p.part)) {
      add(p.updatedAt, 2, { part: p.part, status: p.status, reason: p.reason, source: p.reason !== null && COMMAND_STATUS.test(p.reason) ? 'submit' : 'local' });
    }
  }
  for (const r of story.receipts) {
    add(r.receivedAt, 3, { part: r.part, status: r.status, reason: r.ignored === null ? r.reason : `${r.reason ?? 'receipt'} (ignored: ${r.ignored})`, source: 'receipt' });
  }
  // A message of several parts ends when its last part does: told once for the message too.
  if (isFinal(m.status) && story.parts.length > 1) {
    const cause = entries.filter((e) => e.entry.status === m.status && e.entry.part !== null).sort((a, b) => b.at - a.at)[0];
    add(m.updatedAt, 4, { part: null, status: m.status, reason: m.reason, source: cause?.entry.source ?? 'local' });
  }
  return entries.sort((a, b) => a.at - b.at || a.rank - b.rank).map((e) => ({ at: new Date(e.at).toISOString(), ...e.entry }));
}
