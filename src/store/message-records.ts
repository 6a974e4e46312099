/**
 * The store's role for the per-message records (`records.path`, the events layer's
 * `RecordWriter`): a durable queue of messages that reached a final status, filled in the commit
 * that made them final, and emptied by the writer once it has appended their lines to the file.
 * A store opened without records (its `records` option off) queues nothing and pays nothing.
 *
 * The queue holds at least once: a record is dropped only after its line is written, so a crash
 * between the two writes it again at the next take. The contract every role shares (commits,
 * times) is in `store.ts`.
 */
import type { DeliveryStatus } from '../sms/status.js';

/**
 * One queued record: what the commit that made the message final decided (status, reason, time),
 * with the message and its parts as they are when the record is taken.
 */
export interface MessageRecord {
  /** The record's place in the queue: what `dropRecords` takes. */
  seq: number;
  messageId: string;
  /** Its first final status: DELIVERED, READ, FAILED or REJECTED. */
  status: DeliveryStatus;
  reason: string | null;
  /** When it became final (ms since the epoch). */
  finalAt: number;
  /**
   * The message as it is stored; null only for a message deleted before its record was taken
   * (not by retention, which keeps a message while its record is queued: by hand).
   */
  message: {
    client: string;
    upstream: string;
    route: string | null;
    batchId: number | null;
    /** The sender (source address). */
    source: string;
    destination: string;
    /** When it was accepted (ms since the epoch). */
    acceptedAt: number;
  } | null;
  /** Its parts, by part number (empty when the message is gone). */
  parts: RecordPart[];
}

export interface RecordPart {
  part: number;
  /** The SMSC's message id, once a submit_sm_resp gave it. */
  smscId: string | null;
  /** The bind that took its submit_sm. */
  bind: string | null;
  /** When the SMSC accepted it (ms since the epoch); null when it never did. */
  acceptedAt: number | null;
}

export interface MessageRecords {
  /**
   * Up to `limit` queued records, oldest first. A store several instances share (PostgreSQL)
   * hands each record to one instance at a time: the records it returns are this instance's until
   * it drops them, or until `now` plus its lease has passed while it is gone (then another takes
   * them); taking again returns the ones it holds and has not dropped first. A store without
   * records returns none.
   */
  takeRecords(limit: number, now: number): Promise<MessageRecord[]>;

  /** Removes written records from the queue, in one commit. Returns how many it removed. */
  dropRecords(seqs: readonly number[]): Promise<number>;

  /** Records queued and not dropped, every instance's (metrics). */
  pendingRecords(): Promise<number>;
}
