/** Exponential backoff settings. All durations in milliseconds. */
export interface BackoffPolicy {
  /** Delay ceiling of the first attempt. Default 1,000. Must be > 0. */
  initialMs: number;
  /** Highest delay ceiling. Default 60,000. Must be ≥ initialMs. */
  maxMs: number;
  /** Growth per attempt. Default 2. Must be ≥ 1. */
  multiplier: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 1_000, maxMs: 60_000, multiplier: 2 };

/** The ceiling for attempt `attempt` (0-based): min(max, initial · multiplier^attempt). */
export function backoffCeiling(policy: BackoffPolicy, attempt: number): number {
  return Math.min(policy.maxMs, policy.initialMs * Math.pow(policy.multiplier, Math.max(0, attempt)));
}

/**
 * "Full jitter" (AWS architecture blog): a uniform delay in [0, ceiling). Spreads reconnects of
 * many binds so a recovering SMSC is not hit by all of them at once. `random` is in [0, 1).
 */
export function fullJitterDelay(policy: BackoffPolicy, attempt: number, random: number): number {
  return Math.floor(random * backoffCeiling(policy, attempt));
}
