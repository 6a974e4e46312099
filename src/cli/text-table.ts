/**
 * Plain-text tables for the admin commands' output: columns padded with
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
