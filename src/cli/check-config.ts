import { parseArgs } from 'node:util';
import { formatMaskedConfig, loadConfigWithOverrides, type Env, type LoadedConfig } from '../config/load.js';

const USAGE = `Usage: smppd check-config --config FILE

Reads and validates FILE as 'smppd start' does, SMPPD_… environment overrides included (the
config's header lists them), and prints what the daemon would run with, as YAML: defaults filled
in, relative paths resolved, secrets masked (passwords, tokens and webhook secrets as ***, TLS
and CA files by size, webhook URLs as their origin). A header line names the environment
overrides applied, never their values. Connects to nothing and opens no store.

Exit status: 0 valid; 1 invalid or unreadable (the problems on stderr, one per line, as
'smppd start' prints them); 2 usage error.

Options:
  -c, --config FILE   the configuration file
  -h, --help          this text`;

/** Where the command writes and the environment it reads; the defaults are the process's. */
export interface CheckConfigIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** The `SMPPD_…` overrides come from here. */
  env: Env;
}

const processIo: CheckConfigIo = {
  stdout: (text) => process.stdout.write(`${text}\n`),
  stderr: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
};

/** `smppd check-config`: resolves to 0 (valid), 1 (invalid or unreadable) or 2 (usage). */
export async function runCheckConfig(argv: string[], io: CheckConfigIo = processIo): Promise<number> {
  let config: string | undefined;
  try {
    const { values } = parseArgs({ args: argv, options: { config: { type: 'string', short: 'c' }, help: { type: 'boolean', short: 'h' } } });
    if (values.help) {
      io.stdout(USAGE);
      return 0;
    }
    config = values.config;
  } catch (e) {
    io.stderr(`smppd check-config: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (!config) {
    io.stderr(`smppd check-config: --config FILE is required\n\n${USAGE}`);
    return 2;
  }
  let loaded: LoadedConfig;
  try {
    loaded = await loadConfigWithOverrides(config, io.env);
  } catch (e) {
    // The same line 'smppd start' prints: the messages never carry a secret's value.
    io.stderr(`smppd: ${(e as Error).message}`);
    return 1;
  }
  const overrides = loaded.envOverrides.length > 0 ? loaded.envOverrides.join(', ') : 'none';
  io.stdout(`# smppd check-config: ${config} is valid\n# environment overrides applied: ${overrides}\n${formatMaskedConfig(loaded.config).trimEnd()}`);
  return 0;
}
