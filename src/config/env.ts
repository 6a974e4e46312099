/**
 * Environment overrides: the few keys an operator sets per host (`SMPPD_HTTP_LISTEN`), and
 * secrets that should not sit in the file (`SMPPD_UPSTREAM_<NAME>_PASSWORD`). An explicit table,
 * not a mapping of every key: what can be overridden is documented and reviewed.
 *
 * Applied to the YAML object before validation, so a bad value from the environment is reported
 * by the schema like any other, and `labelEnvProblems` names the variable beside the key path:
 * `SMPPD_HTTP_LISTEN (http.listen): must be host:port, …`. No message carries a value.
 */
import { formatPath } from './schema.js';

/** The process environment, or a test's own object. Only src/config reads it (DESIGN.md). */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * How a value is taken from its string. `text`: as given. `number`: decimal, e.g. `2775` or
 * `0.5`. `boolean`: `true` or `false`. `secret`: as given, less one trailing newline (as for a
 * `…File`), and it replaces the `…File` key beside it.
 */
export type EnvKind = 'text' | 'number' | 'boolean' | 'secret';

interface Override {
  /** The key path below the section or the list entry. */
  readonly path: readonly string[];
  readonly kind: EnvKind;
  /** The key that names a file holding the same secret: dropped, so it is not read. */
  readonly replaces?: string;
}

/** Whole-daemon keys, by variable. */
export const GLOBAL_OVERRIDES = {
  SMPPD_LOG_LEVEL: { path: ['log', 'level'], kind: 'text' },
  SMPPD_HTTP_LISTEN: { path: ['http', 'listen'], kind: 'text' },
  /** Relative to the config file's folder, as in the file. */
  SMPPD_STORE_PATH: { path: ['store', 'path'], kind: 'text' },
  SMPPD_STORE_FSYNC: { path: ['store', 'fsync'], kind: 'boolean' },
  SMPPD_STORE_KIND: { path: ['store', 'kind'], kind: 'text' },
  /** The PostgreSQL URL, which may hold a password: a secret, in place of store.urlFile. */
  SMPPD_STORE_URL: { path: ['store', 'url'], kind: 'secret', replaces: 'urlFile' },
  SMPPD_LIMITS_MAX_QUEUED: { path: ['limits', 'maxQueued'], kind: 'number' },
  SMPPD_SHUTDOWN_DRAIN_SECONDS: { path: ['shutdown', 'drainSeconds'], kind: 'number' },
  SMPPD_METRICS_LISTEN: { path: ['metrics', 'listen'], kind: 'text' },
} as const satisfies Record<string, Override>;

/** Keys of one upstream: `SMPPD_UPSTREAM_<NAME>_<SUFFIX>`, `<NAME>` from `envName`. */
export const UPSTREAM_OVERRIDES = {
  HOST: { path: ['host'], kind: 'text' },
  PORT: { path: ['port'], kind: 'number' },
  SYSTEM_ID: { path: ['systemId'], kind: 'text' },
  PASSWORD: { path: ['password'], kind: 'secret', replaces: 'passwordFile' },
  BINDS: { path: ['binds'], kind: 'number' },
} as const satisfies Record<string, Override>;

/**
 * Keys of one client: `SMPPD_CLIENT_<NAME>_<SUFFIX>`. WEBHOOK_URL adds the webhook when the file
 * has none (url is its only required key); WEBHOOK_SECRET needs a webhook, from the file or the
 * environment.
 */
export const CLIENT_OVERRIDES = {
  TOKEN: { path: ['token'], kind: 'secret', replaces: 'tokenFile' },
  WEBHOOK_URL: { path: ['webhook', 'url'], kind: 'text' },
  WEBHOOK_SECRET: { path: ['webhook', 'secret'], kind: 'secret', replaces: 'secretFile' },
} as const satisfies Record<string, Override>;

/**
 * Variables in these namespaces are smppd's: one that is not in the tables above is a typo (or a
 * key that cannot be overridden), refused rather than ignored. Other `SMPPD_` variables
 * (`SMPPD_BENCH_…`) are left alone.
 */
const SECTIONS = ['LOG', 'HTTP', 'STORE', 'LIMITS', 'SHUTDOWN', 'METRICS'] as const;
const UPSTREAM_PREFIX = 'SMPPD_UPSTREAM_';
const CLIENT_PREFIX = 'SMPPD_CLIENT_';

/** An upstream's or client's name as it appears in a variable: upper case, every other character than A–Z and 0–9 an `_`. `eu-1.primary` → `EU_1_PRIMARY`. */
export function envName(name: string): string {
  return name.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

/** One override taken: the variable and the key path it set, e.g. `upstreams[0].port`. */
export interface AppliedOverride {
  variable: string;
  at: string;
}

export interface EnvOverrides {
  /** The YAML object with the overrides in it (a copy: the input is untouched). */
  input: unknown;
  /** In table order: the whole-daemon keys, then each upstream's, then each client's. */
  applied: AppliedOverride[];
  /** `VARIABLE (key path): reason` or `VARIABLE: reason`; never the value. */
  problems: string[];
}

/**
 * Applies every `SMPPD_…` variable of the tables to the parsed, not yet validated YAML. A
 * section the file leaves out is added (the schema fills its other defaults); a section that is
 * not a mapping is left for the schema to refuse.
 */
export function applyEnvOverrides(yaml: unknown, env: Env): EnvOverrides {
  const input = structuredClone(yaml);
  const applied: AppliedOverride[] = [];
  const problems: string[] = [];
  const take = (variable: string, target: Record<string, unknown>, at: ReadonlyArray<string | number>, override: Override): void => {
    const raw = env[variable];
    if (raw === undefined) return;
    const path = formatPath([...at, ...override.path]);
    const value = parseValue(raw, override.kind);
    if (typeof value === 'object') {
      problems.push(`${variable} (${path}): ${value.problem}`);
      return;
    }
    if (!setPath(target, override.path, value)) return;
    if (override.replaces !== undefined) {
      const parent = override.path.length > 1 ? target[override.path[0]!] : target;
      if (isRecord(parent)) delete parent[override.replaces];
    }
    applied.push({ variable, at: path });
  };

  const root = isRecord(input) ? input : undefined;
  if (root) {
    for (const [variable, override] of Object.entries(GLOBAL_OVERRIDES)) take(variable, root, [], override);
  }
  problems.push(...unknownSectionVariables(env));
  const named = [
    { prefix: UPSTREAM_PREFIX, list: 'upstreams', what: 'upstream', table: UPSTREAM_OVERRIDES },
    { prefix: CLIENT_PREFIX, list: 'clients', what: 'client', table: CLIENT_OVERRIDES },
  ] as const;
  for (const { prefix, list, what, table } of named) {
    const entries = root?.[list];
    // Not a list: the schema says so; which entry a variable means cannot be known.
    if (entries !== undefined && !Array.isArray(entries)) continue;
    const byEnvName = entriesByEnvName(entries ?? []);
    const known = new Set<string>();
    for (const [key, matches] of byEnvName) {
      for (const [suffix, override] of Object.entries<Override>(table)) {
        const variable = `${prefix}${key}_${suffix}`;
        known.add(variable);
        if (env[variable] === undefined) continue;
        if (matches.length > 1) {
          problems.push(`${variable}: matches more than one ${what} (${matches.map((m) => `${list}[${m.index}]`).join(', ')}); give them names that differ in letters or digits`);
          continue;
        }
        const { index: i, entry } = matches[0]!;
        if (suffix === 'WEBHOOK_SECRET' && (entry.webhook === undefined || entry.webhook === null)) {
          // The webhook is not in the file, nor added by WEBHOOK_URL: a secret alone makes no webhook.
          problems.push(`${variable} (${list}[${i}].webhook.secret): ${list}[${i}] has no webhook; add one to the file or set ${prefix}${key}_WEBHOOK_URL`);
          continue;
        }
        take(variable, entry, [list, i], override);
      }
    }
    const names = [...byEnvName].flatMap(([key, matches]) => matches.map((m) => `${m.name} (${key})`));
    problems.push(...unknownNamedVariables(env, prefix, what, Object.keys(table), known, names));
  }
  return { input, applied, problems };
}

/**
 * Names the variable in each schema or file problem at a key path an override set:
 * `http.listen: must be …` → `SMPPD_HTTP_LISTEN (http.listen): must be …`.
 */
export function labelEnvProblems(problems: readonly string[], applied: readonly AppliedOverride[]): string[] {
  return problems.map((line) => {
    const by = applied.find((a) => line.startsWith(`${a.at}: `));
    return by ? `${by.variable} (${line.slice(0, by.at.length)})${line.slice(by.at.length)}` : line;
  });
}

// --- values ---

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

function parseValue(raw: string, kind: EnvKind): string | number | boolean | { problem: string } {
  if (raw === '') return { problem: 'is set but empty; unset it to keep the file’s value' };
  switch (kind) {
    case 'text':
      return raw;
    case 'secret':
      return raw.replace(/\r?\n$/, '');
    case 'number': {
      const text = raw.trim();
      return DECIMAL.test(text) ? Number(text) : { problem: 'must be a decimal number' };
    }
    case 'boolean': {
      const text = raw.trim().toLowerCase();
      if (text === 'true' || text === 'false') return text === 'true';
      return { problem: 'must be true or false' };
    }
  }
}

/** Sets `path` below `target`, adding missing mappings; false when a step is there but not a mapping. */
function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): boolean {
  let at = target;
  for (const key of path.slice(0, -1)) {
    if (at[key] === undefined || at[key] === null) at[key] = {};
    const next = at[key];
    if (!isRecord(next)) return false;
    at = next;
  }
  at[path[path.length - 1]!] = value;
  return true;
}

// --- names ---

interface NamedEntry {
  index: number;
  name: string;
  entry: Record<string, unknown>;
}

/** `envName(name)` → the list entries of that name; an entry without a string name is the schema's to refuse. */
function entriesByEnvName(entries: readonly unknown[]): Map<string, NamedEntry[]> {
  const byName = new Map<string, NamedEntry[]>();
  entries.forEach((entry, index) => {
    if (!isRecord(entry) || typeof entry.name !== 'string' || entry.name === '') return;
    const key = envName(entry.name);
    byName.set(key, [...(byName.get(key) ?? []), { index, name: entry.name, entry }]);
  });
  return byName;
}

function unknownNamedVariables(env: Env, prefix: string, what: string, suffixes: readonly string[], known: Set<string>, names: readonly string[]): string[] {
  const problems: string[] = [];
  const inFile = names.length > 0 ? `the file's ${what}s: ${names.join(', ')}` : `the file has no ${what}s`;
  for (const variable of Object.keys(env).sort()) {
    if (!variable.startsWith(prefix) || known.has(variable) || env[variable] === undefined) continue;
    const suffix = suffixes.find((s) => variable.endsWith(`_${s}`) && variable.length > prefix.length + s.length + 1);
    if (suffix !== undefined) {
      const name = variable.slice(prefix.length, -suffix.length - 1);
      problems.push(`${variable}: no ${what} in the file is named ${name} (in a variable, a name is upper case with _ for each character but A–Z and 0–9); ${inFile}`);
    } else {
      problems.push(`${variable}: not an override; per ${what}: ${suffixes.map((s) => `${prefix}<NAME>_${s}`).join(', ')}`);
    }
  }
  return problems;
}

function unknownSectionVariables(env: Env): string[] {
  const known = Object.keys(GLOBAL_OVERRIDES);
  return Object.keys(env).sort()
    .filter((v) => env[v] !== undefined && !known.includes(v) && SECTIONS.some((s) => v.startsWith(`SMPPD_${s}_`)))
    .map((v) => `${v}: not an override; the environment can set ${known.join(', ')}, and per upstream and client the variables in the header of config/smppd.example.yaml`);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
