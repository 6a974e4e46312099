/**
 * A systemd unit file as sections of keys, each with every value assigned to it in order
 * (systemd.syntax(7): `#` and `;` comment lines, `\` continues a line).
 */
export type UnitFile = Map<string, Map<string, string[]>>;

export function parseUnitFile(text: string): UnitFile {
  const unit: UnitFile = new Map();
  let section: Map<string, string[]> | undefined;
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#') || line.startsWith(';'))) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const full = pending + line;
    pending = '';
    const header = /^\[(.+)\]$/.exec(full);
    if (header) {
      section = new Map();
      unit.set(header[1]!, section);
      continue;
    }
    const eq = full.indexOf('=');
    if (!section || eq < 0) throw new Error(`not a key=value line in a section: ${full}`);
    const key = full.slice(0, eq).trim();
    section.set(key, [...(section.get(key) ?? []), full.slice(eq + 1).trim()]);
  }
  return unit;
}

/** systemd's booleans (systemd.syntax(7)). */
export function isTrue(value: string | undefined): boolean {
  return value !== undefined && ['1', 'yes', 'y', 'true', 't', 'on'].includes(value.toLowerCase());
}

/** A time span such as `60`, `60s`, `1min 30s`, `2m` (systemd.time(7)), in seconds. */
export function seconds(span: string): number {
  const units: Record<string, number> = { '': 1, s: 1, sec: 1, second: 1, seconds: 1, m: 60, min: 60, minute: 60, minutes: 60, h: 3600, hr: 3600, hour: 3600, hours: 3600, ms: 0.001, msec: 0.001 };
  let total = 0;
  const rest = span.trim().replace(/(\d+(?:\.\d+)?)\s*([a-z]*)/gi, (_, n: string, unit: string) => {
    const factor = units[unit.toLowerCase()];
    if (factor === undefined) throw new Error(`unknown time unit in ${span}`);
    total += Number(n) * factor;
    return '';
  });
  if (rest.trim() !== '' || span.trim() === '') throw new Error(`not a time span: ${span}`);
  return total;
}
