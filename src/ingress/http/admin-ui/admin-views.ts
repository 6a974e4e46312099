/**
 * The admin API's answers as JSON (the admin API contract: GET /admin/status, the suspend and
 * resume answers, GET /admin/messages and GET /admin/messages/{id}). The status page renders
 * `AdminStatus`; `smppd status`, `smppd upstream` and `smppd messages` read these shapes from the
 * wire. Times are ISO 8601 strings (UTC).
 */

/** What one bind is doing now. */
export type BindState = 'bound' | 'connecting' | 'binding' | 'backoff' | 'stopped' | 'failed' | 'stopping';

/** Who suspended an upstream, when, and why. */
export interface Suspension {
  since: string;
  /** The admin token's name (admin.tokens[].name). */
  by: string;
  /** At most 200 characters; null when none was given. */
  reason: string | null;
}

export interface BindStatus {
  /** `<upstream>#<index>`, e.g. `demo#0`. */
  id: string;
  state: BindState;
  /** Why it is in this state (last error, stop reason); "" when none. */
  detail: string;
  /** Seconds until the next attempt, while `state` is backoff; otherwise null. */
  backoffSecondsLeft: number | null;
  /** null unless bound. */
  boundSince: string | null;
  /** submit_sm written per second, averaged over the last 10 s and the last minute. */
  submitRate: { last10s: number; last1m: number };
  /** `inUse` = outstanding + held, at most `size`. */
  window: { size: number; inUse: number; held: number };
  /** The AIMD rate now, submit_sm/s (0 = unpaced); episodes of ESME_RTHROTTLED so far. */
  throttle: { rate: number; episodes: number; throttled: boolean };
}

export interface UpstreamStatus {
  name: string;
  /** Routing's view: at least one bind bound. */
  available: boolean;
  suspended: Suspension | null;
  /** Parts queued for it, not in flight; null when the store could not be read. */
  queued: number | null;
  binds: BindStatus[];
}

export interface ClientStatus {
  name: string;
  /** null when the store could not be read (also `outbox`). */
  queued: number | null;
  outbox: { pending: number; dead: number } | null;
}

/** GET /admin/status. */
export interface AdminStatus {
  version: string;
  /** store.instanceId, or the host's name. */
  instanceId: string;
  startedAt: string;
  uptimeSeconds: number;
  store: { kind: string; ok: boolean; latencyMs: number | null; error: string | null };
  upstreams: UpstreamStatus[];
  clients: ClientStatus[];
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

/** GET /admin/messages/{id}: the message, its parts, what happened to it, its events. */
export interface MessageStory {
  message: {
    id: string;
    client: string;
    upstream: string | null;
    route: string | null;
    batchId: string | null;
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
    status: string;
    state: string;
    attempts: number;
    createdAt: string;
    nextAttemptAt: string | null;
    lastError: string | null;
  }>;
}
