/**
 * What the engine reports as it works. src/observability implements it with prom-client;
 * the engine only knows this interface. Gauges (window in use, tokens, rate, bind state) are
 * read from `Pool.stats()` at scrape time instead of being pushed.
 */
export interface EngineMetrics {
  /** A submit_sm was answered (submit_sm_resp or generic_nack), by command_status name. */
  response(upstream: string, statusName: string, latencyMs: number): void;
  /** A request's outcome became uncertain: no response in time, or the connection dropped. */
  uncertain(upstream: string, cause: 'timeout' | 'connection_lost'): void;
  /** A response arrived after its request had timed out. */
  lateResponse(upstream: string): void;
  /** A part was accepted twice (an uncertain resend whose first attempt was answered too). */
  duplicate(upstream: string): void;
  /** A part goes back to the queue for a retryable status. */
  retry(upstream: string, statusName: string): void;
  /** A throttle episode started on a bind. */
  throttled(upstream: string, bind: string): void;
  /** A bind reconnected. */
  reconnect(upstream: string, bind: string): void;
  /** A deliver_sm or data_sm was answered ESME_RTHROTTLED: its bind had `maxPendingDeliveries` being stored. */
  deliveryThrottled(upstream: string): void;
}

export const noEngineMetrics: EngineMetrics = {
  response: () => {},
  uncertain: () => {},
  lateResponse: () => {},
  duplicate: () => {},
  retry: () => {},
  throttled: () => {},
  reconnect: () => {},
  deliveryThrottled: () => {},
};
