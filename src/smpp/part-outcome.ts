/**
 * What the pool is handed and what it hands back: the parts of one message, and what became of
 * each. Dispatch turns these outcomes into what the store records (dispatch/part-result.ts).
 */
import type { SubmitSmPdu } from './pdu.js';

/** One submit_sm to send; the pool assigns the sequence number. */
export type SubmitPart = Omit<SubmitSmPdu, 'sequenceNumber'>;

/** What became of one part. */
export type PartOutcome =
  | { kind: 'accepted'; messageId: string; attempts: number; bind: string; latencyMs: number }
  | { kind: 'rejected'; commandStatus: number; statusName: string; attempts: number }
  /** Refused before sending: the PDU cannot be encoded (a field too long for SMPP v3.4). */
  | { kind: 'invalid'; reason: string }
  /**
   * Not sent: sending it failed in smppd itself (a bug, not the message's fault), logged at error.
   * Not retried: a fault that repeats would send the part round the queue for ever.
   */
  | { kind: 'internal'; reason: string }
  | { kind: 'failed'; commandStatus: number; statusName: string; attempts: number }
  /**
   * No response, and no resend: `why` says whether the policy is `fail` ('policy'), `resend` used up
   * `maxAttempts` ('attempts'), or the pool stopped before it could resend ('stopped'). It may or
   * may not have gone out.
   */
  | { kind: 'uncertain'; cause: 'timeout' | 'connection_lost'; attempts: number; why: UncertainWhy }
  /**
   * Never written (or, for a part whose earlier attempts were uncertain, not written again): the
   * pool stopped, an earlier part of the message failed, or the message was withdrawn for another
   * upstream ('withdrawn': its upstream has no bind up; `attempts`: those it was sent with no
   * answer, which count toward `retry.maxAttempts` wherever it goes next).
   */
  | { kind: 'unsent'; reason: 'stopped' | 'earlier_part_failed' | 'withdrawn'; attempts?: number };

/** A part the SMSC accepted. */
export type AcceptedOutcome = Extract<PartOutcome, { kind: 'accepted' }>;

/**
 * Stores an accepted part of a message before the message has ended (`UpstreamPool.submit`):
 * `index` is the part's place in the message. The part's window slot is kept until it settles.
 */
export type StorePart = (index: number, outcome: AcceptedOutcome) => Promise<unknown>;

export interface MessageOutcome {
  parts: PartOutcome[];
  /**
   * Gives back the window slot the message's last part holds (`submit`'s `storePart`): call it once
   * its outcome is stored, or will not be (the store failed). Idempotent; nothing to give back
   * without `storePart`.
   */
  release?: () => void;
}

/** Why an uncertain part was not resent (`PartOutcome` 'uncertain'). */
export type UncertainWhy = 'policy' | 'attempts' | 'stopped';
