/**
 * One line of the records file (`records.path`): a message that reached its final status, as JSON
 * on one line. The format is versioned by `v` and documented field by field in
 * docs/records.md; a change that drops or changes the meaning of a field is a new version, one
 * that adds a field is not.
 */
import type { MessageRecord } from '../store/message-records.js';

/** The format's version, the `v` of every line. */
export const RECORD_FORMAT_VERSION = 1;

/** A line as written (docs/records.md); times ISO 8601 UTC with milliseconds. */
export interface RecordLine {
  v: typeof RECORD_FORMAT_VERSION;
  id: string;
  client: string | null;
  upstream: string | null;
  route: string | null;
  batchId: number | null;
  bind: string | null;
  sender: string | null;
  destination: string | null;
  parts: number | null;
  status: string;
  reason: string | null;
  smscIds: Array<string | null>;
  acceptedAt: string | null;
  sentAt: string | null;
  finalAt: string;
}

const iso = (ms: number): string => new Date(ms).toISOString();

export function toRecordLine(r: MessageRecord): RecordLine {
  const m = r.message;
  const accepted = r.parts.flatMap((p) => (p.acceptedAt === null ? [] : [p.acceptedAt]));
  return {
    v: RECORD_FORMAT_VERSION,
    id: r.messageId,
    client: m?.client ?? null,
    upstream: m?.upstream ?? null,
    route: m?.route ?? null,
    batchId: m?.batchId ?? null,
    // A message's parts go out on one bind unless one was sent again after its link dropped.
    bind: r.parts.find((p) => p.bind !== null)?.bind ?? null,
    sender: m?.source ?? null,
    destination: m?.destination ?? null,
    parts: m === null ? null : r.parts.length,
    status: r.status,
    reason: r.reason,
    smscIds: r.parts.map((p) => p.smscId),
    acceptedAt: m === null ? null : iso(m.acceptedAt),
    sentAt: accepted.length === 0 ? null : iso(Math.min(...accepted)),
    finalAt: iso(r.finalAt),
  };
}

/** The records as lines of the file, each ended by a newline. */
export function recordLines(records: readonly MessageRecord[]): string {
  return records.map((r) => `${JSON.stringify(toRecordLine(r))}\n`).join('');
}
