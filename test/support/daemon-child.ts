/**
 * `smppd start` as a child process from the sources (the way systemd runs it, and kill -9 can
 * reach it), on a config and store of its own in a fresh folder: for the tests of what the
 * process does as a whole (crash, signals, faults).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonLinesProcess } from './json-lines-process.js';

/** What a test undoes after it, last first. */
export type Cleanups = Array<() => Promise<void> | void>;

export interface DaemonFolder {
  dir: string;
  configPath: string;
  /** The SQLite store the config names. */
  storePath: string;
}

/**
 * A folder with `smppd.yaml`: logs at info, HTTP on a free port of 127.0.0.1, one client `app`
 * with `token`, the store `smppd.db` beside it, and `upstream` (a YAML flow map) as the one
 * upstream. Removed after the test.
 */
export function daemonFolder(cleanups: Cleanups, o: { prefix: string; token: string; upstream: string }): DaemonFolder {
  const dir = mkdtempSync(join(tmpdir(), o.prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const configPath = join(dir, 'smppd.yaml');
  writeFileSync(configPath, [
    'log: { level: info }',
    'http: { listen: "127.0.0.1:0" }',
    `clients: [{ name: app, token: ${o.token} }]`,
    'store: { path: smppd.db }',
    'upstreams:',
    `  - ${o.upstream}`,
    '',
  ].join('\n'));
  return { dir, configPath, storePath: join(dir, 'smppd.db') };
}

/** `smppd start --config configPath`, with `imports` loaded first (`node --import`); SIGKILLed after the test if still running. */
export function startDaemonChild(cleanups: Cleanups, configPath: string, o: { imports?: string[]; env?: NodeJS.ProcessEnv } = {}): JsonLinesProcess {
  const imports = ['./test/support/ts-register.mjs', ...(o.imports ?? [])].flatMap((m) => ['--import', m]);
  const child = new JsonLinesProcess(process.execPath, [...imports, 'src/main.ts', 'start', '--config', configPath], o.env);
  cleanups.push(() => child.kill());
  return child;
}
