import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { ErrorCode, SmppdError } from '../core/errors.js';
import {
  configSchema, formatIssues, formatPath,
  type RawConfig, type SimulatorConfig, type SmppdConfig, type StatusClassName, type TlsConfig, type UpstreamConfig,
} from './schema.js';

/** Reads, parses and validates a config file. Errors name every bad key's path. */
export async function loadConfigFile(path: string): Promise<SmppdConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new SmppdError(ErrorCode.CONFIG_UNREADABLE, `cannot read config ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  return parseConfig(text, dirname(resolve(path)), path);
}

/** Parses and validates YAML text; relative file paths resolve against `baseDir`. */
export async function parseConfig(text: string, baseDir: string, source = 'config'): Promise<SmppdConfig> {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const lines = doc.errors.map((e) => `${source}:${e.linePos?.[0]?.line ?? '?'}:${e.linePos?.[0]?.col ?? '?'}: ${e.message.split('\n')[0]}`);
    throw new SmppdError(ErrorCode.CONFIG_INVALID, `invalid YAML in ${source}:\n${lines.join('\n')}`);
  }
  const parsed = configSchema.safeParse(doc.toJS() ?? {});
  if (!parsed.success) {
    throw invalid(source, formatIssues(parsed.error.issues));
  }
  const problems: string[] = [];
  const config = await resolveFiles(parsed.data, baseDir, problems);
  if (problems.length > 0) throw invalid(source, problems);
  return config;
}

function invalid(source: string, lines: string[]): SmppdError {
  return new SmppdError(ErrorCode.CONFIG_INVALID, `invalid configuration in ${source}:\n${lines.join('\n')}`, { problems: lines });
}

async function resolveFiles(raw: RawConfig, baseDir: string, problems: string[]): Promise<SmppdConfig> {
  const read = async (path: string, at: Array<string | number>, trim: boolean): Promise<Buffer | undefined> => {
    const full = isAbsolute(path) ? path : resolve(baseDir, path);
    try {
      const data = await readFile(full);
      return trim ? Buffer.from(data.toString('utf8').replace(/\r?\n$/, '')) : data;
    } catch (e) {
      problems.push(`${formatPath(at)}: cannot read ${full}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      return undefined;
    }
  };
  const secret = async (inline: string | undefined, file: string | undefined, at: Array<string | number>): Promise<string> => {
    if (inline !== undefined) return inline;
    if (file === undefined) return '';
    return (await read(file, [...at.slice(0, -1), 'passwordFile'], true))?.toString('utf8') ?? '';
  };

  const upstreams: UpstreamConfig[] = [];
  for (const [i, u] of raw.upstreams.entries()) {
    const at = ['upstreams', i];
    let tls: TlsConfig | false = false;
    if (u.tls !== false) {
      tls = { rejectUnauthorized: u.tls.rejectUnauthorized };
      if (u.tls.servername !== undefined) tls.servername = u.tls.servername;
      for (const key of ['ca', 'cert', 'key'] as const) {
        const file = u.tls[key];
        if (file !== undefined) {
          const data = await read(file, [...at, 'tls', key], false);
          if (data) tls[key] = data;
        }
      }
    }
    const password = await secret(u.password, u.passwordFile, [...at, 'password']);
    if (password.length > 8) problems.push(`${formatPath([...at, 'passwordFile'])}: the SMPP password allows at most 8 characters`);
    const { password: _p, passwordFile: _f, ...rest } = u;
    const commandStatus: Record<number, StatusClassName> = {};
    for (const [code, cls] of Object.entries(u.commandStatus)) commandStatus[Number(code)] = cls;
    upstreams.push({
      ...rest,
      tls,
      password,
      burst: u.burst ?? Math.max(1, Math.ceil(u.ratePerBind / 50)),
      throttle: {
        pauseSeconds: u.throttle.pauseSeconds,
        minRatePerBind: u.throttle.minRatePerBind,
        recoverPerSecond: u.throttle.recoverPerSecond ?? Math.max(1, Math.ceil(u.ratePerBind / 10)),
      },
      commandStatus,
    });
  }

  let simulator: SimulatorConfig | undefined;
  if (raw.simulator) {
    const s = raw.simulator;
    simulator = {
      enabled: s.enabled, host: s.host, port: s.port, systemId: s.systemId ?? '',
      password: await secret(s.password, s.passwordFile, ['simulator', 'password']),
      deliveryReceiptDelayMs: s.deliveryReceiptDelayMs,
    };
  }
  return { log: raw.log, shutdown: raw.shutdown, ...(simulator ? { simulator } : {}), upstreams };
}

/** A copy safe to print: secrets masked, file contents described by size. */
export function maskSecrets(config: SmppdConfig): unknown {
  return JSON.parse(JSON.stringify(config, (key, value: unknown) => {
    if (/password|secret|token/i.test(key) && typeof value === 'string') return '***';
    if (value && typeof value === 'object' && (value as { type?: string }).type === 'Buffer') {
      return `<${((value as { data: unknown[] }).data ?? []).length} bytes>`;
    }
    return value;
  }));
}
