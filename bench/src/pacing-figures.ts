/**
 * The pacing cases' figures, from the simulator's counters read every few hundred milliseconds.
 * Pure: the readings and the phases in, the figures out.
 */
import { round } from './stats.js';

/** The simulator's counts since the start, read `t` ms after the load started. */
export interface SmscReading {
  t: number;
  /** submit_sm received. */
  received: number;
  /** submit_sm answered ESME_ROK. */
  accepted: number;
  /** submit_sm answered ESME_RTHROTTLED. */
  throttled: number;
}

/** A stretch of the case with one SMSC limit: `from`–`to` ms after the load started. */
export interface PhaseSpan {
  from: number;
  to: number;
  /** submit_sm/s the SMSC accepts (the bind's or the account's limit). */
  limit: number;
}

export interface PhaseFigures {
  /** submit_sm/s the SMSC accepted from `settledAfterMs` into the phase to its end; null when the phase is shorter. */
  acceptedPerSecond: number | null;
  /** acceptedPerSecond ÷ the limit, %. */
  achievedPercent: number | null;
  /** Of the submit_sm the SMSC received over the same span, % answered ESME_RTHROTTLED. */
  throttledPercent: number | null;
  /**
   * Seconds from the phase's start to the start of the first 1-s window from which every 1-s
   * window of the phase accepted at least `settledShare` of the limit; null when the last one did not.
   */
  settleSeconds: number | null;
  /** The lowest and highest 1-s window from the settling on, % of the limit. */
  windowMinPercent: number | null;
  windowMaxPercent: number | null;
}

/** The figures "after settling" start this long after the start or a change. */
export const SETTLED_AFTER_MS = 10_000;
/** A 1-s window at this share of the limit or above counts as settled. */
export const SETTLED_SHARE = 0.95;

/** One window of at least a second between two readings of the phase: its accepted rate. */
interface Window {
  from: number;
  to: number;
  perSecond: number;
}

/**
 * The windows between readings about a second apart, each ending at a reading of the phase and
 * starting at the latest reading at least 1 s before it (the rate by the time between them, so a
 * late reading does not count as a fast second).
 */
export function secondWindows(readings: SmscReading[], phase: PhaseSpan): Window[] {
  const inPhase = readings.filter((r) => r.t >= phase.from && r.t <= phase.to);
  const windows: Window[] = [];
  for (let j = 0, i = -1; j < inPhase.length; j++) {
    while (i + 1 < j && inPhase[j]!.t - inPhase[i + 1]!.t >= 1000) i++;
    if (i < 0 || inPhase[j]!.t - inPhase[i]!.t < 1000) continue;
    const a = inPhase[i]!;
    const b = inPhase[j]!;
    windows.push({ from: a.t, to: b.t, perSecond: ((b.accepted - a.accepted) * 1000) / (b.t - a.t) });
  }
  return windows;
}

/** The figures of one phase; `settledAfterMs` is where "after settling" starts. */
export function phaseFigures(readings: SmscReading[], phase: PhaseSpan, settledAfterMs = SETTLED_AFTER_MS): PhaseFigures {
  const windows = secondWindows(readings, phase);
  let settledFrom = windows.length;
  while (settledFrom > 0 && windows[settledFrom - 1]!.perSecond >= SETTLED_SHARE * phase.limit) settledFrom--;
  const settleSeconds = settledFrom < windows.length ? round((windows[settledFrom]!.from - phase.from) / 1000, 2) : null;

  const from = readings.find((r) => r.t >= phase.from + settledAfterMs && r.t <= phase.to);
  const to = [...readings].reverse().find((r) => r.t <= phase.to);
  const span = from && to && to.t - from.t >= 1000 ? { from, to } : undefined;
  const accepted = span ? ((span.to.accepted - span.from.accepted) * 1000) / (span.to.t - span.from.t) : null;
  const received = span ? span.to.received - span.from.received : 0;
  const settled = span ? windows.filter((w) => w.from >= span.from.t) : [];
  const percent = (perSecond: number): number => round((100 * perSecond) / phase.limit, 1);
  return {
    acceptedPerSecond: accepted === null ? null : round(accepted, 1),
    achievedPercent: accepted === null ? null : percent(accepted),
    throttledPercent: span && received > 0 ? round((100 * (span.to.throttled - span.from.throttled)) / received, 2) : null,
    settleSeconds,
    windowMinPercent: settled.length > 0 ? percent(Math.min(...settled.map((w) => w.perSecond))) : null,
    windowMaxPercent: settled.length > 0 ? percent(Math.max(...settled.map((w) => w.perSecond))) : null,
  };
}
