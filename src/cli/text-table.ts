/**
 * Plain-text tables and short durations for the admin commands' output: columns padded with
 * spaces (two between columns), numbers (and their headers) right-aligned, no trailing blanks, so the lines read in a
 * terminal and split on whitespace in a script.
 */

export type Cell = string | number;

/**
 * Text from the daemon (an SMSC's error, a reason, a message's text) on one line, with no
 * control character: a line break would break a table, an escape sequence would drive the terminal.
 */
export function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what this removes
  return text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ');
}

/** The header line, then one line per row. A cell that is a number is right-aligned. */
export function renderTable(headers: readonly string[], rows: ReadonlyArray<readonly Cell[]>): string[] {
  const cells = rows.map((r) => r.map((c) => (typeof c === 'number' ? c : oneLine(c))));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => String(r[i] ?? '').length)));
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === 'number'));
  const line = (cells: readonly Cell[]): string => cells
    .map((c, i) => (numeric[i] ? String(c).padStart(widths[i]!) : String(c).padEnd(widths[i]!)))
    .join('  ')
    .trimEnd();
  return [line(headers), ...cells.map((r) => line(r))];
}

/** 0s, 59s, 1m05s, 2h03m, 3d04h: the two largest units, for how long something has lasted. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s}s`;
  const two = (n: number): string => String(n).padStart(2, '0');
  if (s < 3_600) return `${Math.floor(s / 60)}m${two(s % 60)}s`;
  if (s < 86_400) return `${Math.floor(s / 3_600)}h${two(Math.floor((s % 3_600) / 60))}m`;
  return `${Math.floor(s / 86_400)}d${two(Math.floor((s % 86_400) / 3_600))}h`;
}

/** Seconds from the ISO time `since` to `nowMs`; null when `since` is not a time. */
export function secondsSince(since: string, nowMs: number): number | null {
  const t = Date.parse(since);
  return Number.isNaN(t) ? null : Math.max(0, (nowMs - t) / 1000);
}

/** A rate with one decimal below 100, whole above: 0, 9.5, 950. */
export function formatRate(rate: number): string {
  if (rate === 0) return '0';
  return rate < 100 ? rate.toFixed(1) : String(Math.round(rate));
}
