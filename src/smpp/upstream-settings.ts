/** An upstream's settings as its pool (`UpstreamPool`) takes them. */
import type { BackoffPolicy } from '../core/backoff.js';
import type { BindSettings } from './bind.js';
import type { CommandStatusTable } from './command-status.js';
import type { DataSmPdu, DeliverSmPdu } from './pdu.js';

/** What to do with a request whose outcome is uncertain (no response in time, link dropped). */
export type UncertainPolicy = 'resend' | 'fail';

export interface UpstreamSettings {
  name: string;
  /** One entry per bind; `index` 0..n-1. */
  binds: BindSettings[];
  /**
   * submit_sm per second shared by all binds of this upstream, across every instance (each takes
   * an equal share, `setInstances`); 0 = no account limit.
   */
  accountRate: number;
  onUncertain: UncertainPolicy;
  /** Attempts per part for retryable statuses other than throttling, and for uncertain ones under `resend` (≥ 1). */
  maxAttempts: number;
  retryBackoff: BackoffPolicy;
  /** Jobs waiting for a bind before `submit` refuses with POOL_FULL (≥ 1). */
  maxQueued: number;
  statusTable: CommandStatusTable;
}

export type DeliverHandler = (upstream: string, bind: string, pdu: DeliverSmPdu | DataSmPdu) => Promise<number>;
