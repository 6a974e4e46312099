/**
 * The store's role for the operator's questions about messages, across clients: which messages
 * went to a number (or came from a client, in a time range, in a status), newest first, and the
 * whole story of one message (its parts, SMSC ids, every status change with its time and reason,
 * its events and their deliveries). The contract every role shares (commits, times) is in `store.ts`.
 */
import type { DeliveryStatus } from '../sms/status.js';

/** What `findMessages` looks for; every field given must match. */
export interface MessageQuery {
  /** The destination as stored (digits, with a leading + when it was sent with one). */
  destination?: string;
  client?: string;
  /** Accepted at or after (wall ms). */
  since?: number;
  /** Accepted before (wall ms). */
  until?: number;
  status?: DeliveryStatus;
  /** At most this many (1–500). */
  limit: number;
  /** The `next` of the page before: only messages stored before that point. */
  after?: number;
}

/** One message as a search lists it. */
export interface FoundMessage {
  id: string;
  client: string;
  upstream: string;
  source: string;
  destination: string;
  status: DeliveryStatus;
  reason: string | null;
  parts: number;
  acceptedAt: number;
  updatedAt: number;
}

export interface FoundMessages {
  messages: FoundMessage[];
  /**
   * Where the next page starts (pass it as `after`); null when there is nothing further. A page
   * may hold fewer than `limit` messages and still have a `next`: a search without a destination
   * reads a bounded stretch of the store per page, so that it never holds the store for long.
   */
  next: number | null;
}

export interface StoryPart {
  part: number;
  /** queued, inflight or done. */
  state: string;
  status: DeliveryStatus;
  reason: string | null;
  smscId: string | null;
  /** The bind that sent it (`upstream#index`); null until sent. */
  bind: string | null;
  attempts: number;
  /** When the SMSC accepted it (its submit_sm_resp recorded); null before, or for parts sent before this was kept. */
  sentAt: number | null;
  updatedAt: number;
}

/** A receipt matched to a part of the message, as it came, the ignored ones too. */
export interface StoryReceipt {
  part: number;
  /** The status it maps to; null for an unrecognised receipt word. */
  status: DeliveryStatus | null;
  reason: string | null;
  /** Why it changed nothing (a status that would move back, a repeat); null when it counted. */
  ignored: string | null;
  receivedAt: number;
}

/** An event of the message: still in the outbox, or delivered (its outbox row gone, its delivery logged). */
export interface StoryEvent {
  id: number;
  kind: string;
  /** The status the event tells; null when its payload names none. */
  status: string | null;
  state: 'pending' | 'blocked' | 'dead' | 'delivered';
  /** The sends made so far (a delivered event's: the one delivered too). */
  attempts: number;
  createdAt: number;
  /** When it is due next; null once delivered. */
  nextAttemptAt: number | null;
  /** When its receiver took it; null until then. */
  deliveredAt: number | null;
  /** The error of its last failed send (a delivered event's: of the send before it); null when none failed. */
  lastError: string | null;
}

/** What the store keeps of one message. */
export interface MessageStory {
  message: {
    id: string; client: string; upstream: string; route: string | null; batchId: number | null; source: string; destination: string;
    text: string; encoding: string; status: DeliveryStatus; reason: string | null; acceptedAt: number; updatedAt: number;
  };
  parts: StoryPart[];
  receipts: StoryReceipt[];
  events: StoryEvent[];
}

export interface MessageSearch {
  /** Messages of every client that match `query`, newest first (by the order stored). */
  findMessages(query: MessageQuery): Promise<FoundMessages>;

  /** One message with its parts, receipts and events (in the outbox and delivered), in one snapshot; undefined when unknown. */
  messageStory(messageId: string): Promise<MessageStory | undefined>;
}
