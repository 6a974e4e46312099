/**
 * The admin API's answers as JSON (the admin API contract: GET /admin/status, the suspend and
 * resume answers, GET /admin/messages and GET /admin/messages/{id}), as the status page renders
 * them and `smppd status`, `smppd upstream` and `smppd messages` read them from the wire. The
 * status is the object the daemon serializes (dispatch/admin-status.ts); the others are the
 * routes' views (ingress/http/admin). Times are ISO 8601 strings (UTC).
 */

export type { BindState } from '../../../smpp/bind.js';
export type {
  AdminBindStatus as BindStatus, AdminClientStatus as ClientStatus, AdminStatus, AdminUpstreamStatus as UpstreamStatus,
} from '../../../dispatch/admin-status.js';

/** Who suspended an upstream, when, and why. */
export interface Suspension {
  since: string;
  /** The admin token's name (admin.tokens[].name). */
  by: string;
  /** At most 200 characters; null when none was given. */
  reason: string | null;
}

/** POST /admin/upstreams/{name}/suspend and …/resume. */
export interface SuspendAnswer {
  upstream: string;
  suspended: Suspension | null;
}

/** One row of GET /admin/messages. */
export interface MessageSummary {
  id: string;
  client: string;
  upstream: string | null;
  sender: string;
  destination: string;
  status: string;
  reason: string | null;
  parts: number;
  acceptedAt: string;
  updatedAt: string;
}

/** GET /admin/messages: newest first; `next` is the `after` cursor of the next page. */
export interface MessageList {
  messages: MessageSummary[];
  next: string | null;
}

/** GET /admin/messages/{id}: the message, its parts, what happened to it, its events and their deliveries. */
export interface MessageStory {
  message: {
    id: string;
    client: string;
    upstream: string | null;
    route: string | null;
    batchId: number | null;
    sender: string;
    destination: string;
    text: string;
    encoding: string;
    status: string;
    reason: string | null;
    acceptedAt: string;
    updatedAt: string;
  };
  parts: Array<{
    part: number;
    state: string;
    status: string;
    reason: string | null;
    smscId: string | null;
    bind: string | null;
    attempts: number;
    sentAt: string | null;
    updatedAt: string;
  }>;
  history: Array<{
    at: string;
    part: number | null;
    /** null: a receipt whose word smppd does not know (it changed nothing). */
    status: string | null;
    reason: string | null;
    source: 'accept' | 'submit' | 'receipt' | 'local';
  }>;
  events: Array<{
    id: string | number;
    kind: string;
    /** null when the event names no status. */
    status: string | null;
    /** pending, blocked, dead or delivered. */
    state: string;
    attempts: number;
    createdAt: string;
    /** null once delivered. */
    nextAttemptAt: string | null;
    /** null until delivered. */
    deliveredAt: string | null;
    lastError: string | null;
  }>;
}
