/** Pure helpers for the benchmark's figures. */

/** The p-th percentile (0–100) of `values` by nearest rank; NaN when empty. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** The largest number of `times` (ms, ascending) that fall in any window of `windowMs`. */
export function maxInWindow(times: number[], windowMs: number): number {
  let max = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= windowMs) j++;
    max = Math.max(max, i - j + 1);
  }
  return max;
}

export function round(value: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** What a CPU cost per message amounts to at a rate, % of one core (a machine of two has 200). */
export function percentAtRate(cpuUsPerMessage: number, perSecond: number): number {
  return round((cpuUsPerMessage * perSecond) / 10_000, 0);
}
