/**
 * Message search and a message's story, decided once for both stores: the statement a query
 * makes (each store gives its placeholders), where a page ends and the next begins, and the rows
 * as the role's types.
 *
 * Pages follow the messages' order of storage (`seq`), newest first: the cursor is the seq the
 * next page reads below. A search by destination reads `messages_destination` (destination, seq),
 * so its cost is its matches. Any other search reads the messages by seq, and reads at most
 * SCAN_WINDOW of them per page: a rare client or status over a large store then takes several
 * pages, each short, rather than one read that holds the store (SQLite's one thread) for seconds.
 */
import type { DeliveryStatus } from '../../sms/status.js';
import type { FoundMessage, FoundMessages, MessageQuery, MessageStory, StoryEvent, StoryPart, StoryReceipt } from '../message-search.js';
import { eventStatus } from './event-deliveries.js';

/** Messages (by seq) one page of a search without a destination reads at most. */
export const SCAN_WINDOW = 50_000;

export const FOUND_COLUMNS = `m.seq, m.id, m.client, m.upstream, m.source, m.destination, m.status, m.reason, m.created_at, m.updated_at,
  (SELECT COUNT(*) FROM parts p WHERE p.message_id = m.id) AS parts`;

export interface FoundRow {
  seq: number;
  id: string;
  client: string;
  upstream: string;
  source: string;
  destination: string;
  status: DeliveryStatus;
  reason: string | null;
  created_at: number;
  updated_at: number;
  parts: number;
}

/** The seq range one page reads: below `high`, at or above `low` (a window); `low` null: down to the first. */
export interface SeqRange {
  high: number | null;
  low: number | null;
}

/**
 * The range of a page: by destination, everything below the cursor (the index bounds it); else
 * SCAN_WINDOW below the cursor, or below `top` (one past the newest seq) on the first page.
 */
export function pageRange(q: MessageQuery, top: number): SeqRange {
  const high = q.after ?? null;
  if (q.destination !== undefined) return { high, low: null };
  const from = high ?? top;
  return { high: from, low: Math.max(0, from - SCAN_WINDOW) };
}

/** The statement of one page: its filters, its range, newest first, `limit + 1` rows (one more tells whether the page is full). */
export function searchStatement(q: MessageQuery, range: SeqRange, placeholder: (n: number) => string): { sql: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (condition: (p: string) => string, value: unknown): void => {
    params.push(value);
    where.push(condition(placeholder(params.length)));
  };
  if (q.destination !== undefined) add((p) => `m.destination = ${p}`, q.destination);
  if (range.high !== null) add((p) => `m.seq < ${p}`, range.high);
  if (range.low !== null) add((p) => `m.seq >= ${p}`, range.low);
  if (q.client !== undefined) add((p) => `m.client = ${p}`, q.client);
  if (q.status !== undefined) add((p) => `m.status = ${p}`, q.status);
  if (q.since !== undefined) add((p) => `m.created_at >= ${p}`, q.since);
  if (q.until !== undefined) add((p) => `m.created_at < ${p}`, q.until);
  params.push(q.limit + 1);
  const sql = `SELECT ${FOUND_COLUMNS} FROM messages m${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY m.seq DESC LIMIT ${placeholder(params.length)}`;
  return { sql, params };
}

/**
 * The page: at most `limit` rows, and where the next one starts. A full page continues below its
 * last row; a window read to its end continues below the window, unless nothing older is left
 * (`oldest`: the lowest seq stored, null when none) or what is older was accepted before `since`
 * (`windowStart`: the accept time of the window's first message, as seq and accept time rise together).
 */
export function pageOf(rows: readonly FoundRow[], q: MessageQuery, range: SeqRange, oldest: number | null, windowStart: number | null): FoundMessages {
  const messages = rows.slice(0, q.limit).map(toFound);
  if (rows.length > q.limit) return { messages, next: rows[q.limit - 1]!.seq };
  if (range.low === null || oldest === null || range.low <= oldest) return { messages, next: null };
  if (q.since !== undefined && windowStart !== null && windowStart < q.since) return { messages, next: null };
  return { messages, next: range.low };
}

function toFound(r: FoundRow): FoundMessage {
  return {
    id: r.id, client: r.client, upstream: r.upstream, source: r.source, destination: r.destination, status: r.status, reason: r.reason,
    parts: Number(r.parts), acceptedAt: Number(r.created_at), updatedAt: Number(r.updated_at),
  };
}

// --- a message's story ---

export const STORY_MESSAGE_COLUMNS = 'id, client, upstream, route, batch_id, source, destination, text, encoding, status, reason, created_at, updated_at';
export const STORY_PART_COLUMNS = 'part, state, status, reason, smsc_id, bind, attempts, sent_at, updated_at';
export const STORY_RECEIPT_COLUMNS = 'part, status, reason, ignored, received_at';
export const STORY_EVENT_COLUMNS = 'id, kind, payload, state, attempts, created_at, next_attempt_at, last_error';
export const STORY_DELIVERED_COLUMNS = 'event_id, kind, status, attempts, created_at, delivered_at, last_error';

export interface StoryMessageRow {
  id: string; client: string; upstream: string; route: string | null; batch_id: number | null; source: string; destination: string;
  text: string; encoding: string; status: DeliveryStatus; reason: string | null; created_at: number; updated_at: number;
}
export interface StoryPartRow {
  part: number; state: string; status: DeliveryStatus; reason: string | null; smsc_id: string | null; bind: string | null;
  attempts: number; sent_at: number | null; updated_at: number;
}
export interface StoryReceiptRow { part: number; status: DeliveryStatus | null; reason: string | null; ignored: string | null; received_at: number }
export interface StoryEventRow {
  id: number; kind: string; payload: string; state: 'pending' | 'blocked' | 'dead'; attempts: number; created_at: number; next_attempt_at: number; last_error: string | null;
}
export interface StoryDeliveredRow {
  event_id: number; kind: string; status: string | null; attempts: number; created_at: number; delivered_at: number; last_error: string | null;
}

/** The story; its events are those still in the outbox (`events`) and the delivered ones (`delivered`), by id. */
export function storyOf(
  m: StoryMessageRow, parts: readonly StoryPartRow[], receipts: readonly StoryReceiptRow[], events: readonly StoryEventRow[], delivered: readonly StoryDeliveredRow[],
): MessageStory {
  return {
    message: {
      id: m.id, client: m.client, upstream: m.upstream, route: m.route, batchId: m.batch_id === null ? null : Number(m.batch_id), source: m.source,
      destination: m.destination, text: m.text, encoding: m.encoding, status: m.status, reason: m.reason, acceptedAt: Number(m.created_at), updatedAt: Number(m.updated_at),
    },
    parts: parts.map((p): StoryPart => ({
      part: p.part, state: p.state, status: p.status, reason: p.reason, smscId: p.smsc_id, bind: p.bind, attempts: p.attempts,
      sentAt: p.sent_at === null ? null : Number(p.sent_at), updatedAt: Number(p.updated_at),
    })),
    receipts: receipts.map((r): StoryReceipt => ({ part: r.part, status: r.status, reason: r.reason, ignored: r.ignored, receivedAt: Number(r.received_at) })),
    events: [
      ...events.map((e): StoryEvent => ({
        id: Number(e.id), kind: e.kind, status: eventStatus(e.payload), state: e.state, attempts: e.attempts, createdAt: Number(e.created_at),
        nextAttemptAt: Number(e.next_attempt_at), deliveredAt: null, lastError: e.last_error,
      })),
      ...delivered.map((d): StoryEvent => ({
        id: Number(d.event_id), kind: d.kind, status: d.status, state: 'delivered', attempts: d.attempts, createdAt: Number(d.created_at),
        nextAttemptAt: null, deliveredAt: Number(d.delivered_at), lastError: d.last_error,
      })),
    ].sort((a, b) => a.id - b.id),
  };
}
