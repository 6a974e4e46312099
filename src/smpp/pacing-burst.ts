/**
 * The burst a token bucket allows at `rate` when its configured ceiling is `ceiling` with
 * `burst`: the same time's worth as configured, so a sender slowed to what the SMSC accepts does
 * not empty the SMSC's own, smaller bucket in one go. Without a ceiling (0, unpaced until it
 * learned a limit): 20 ms worth, as a paced bind gets by default. At least 1.
 */
export function pacingBurst(rate: number, ceiling: number, burst: number): number {
  if (ceiling > 0) return Math.max(1, (burst * Math.min(rate, ceiling)) / ceiling);
  return Math.max(1, Math.ceil(rate / 50));
}
