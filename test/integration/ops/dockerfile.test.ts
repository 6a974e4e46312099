/**
 * The Dockerfile, checked without a Docker engine (CI has none): its stages, what each installs,
 * the user, volume, port and health check of the image that runs, that every file it copies is
 * in the build context, and that its default command's config loads with the project's loader.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DAEMON_NODE_FLAGS } from '../../../src/cli/node-flags.js';
import { loadConfigFile } from '../../../src/config/load.js';
import { commandOf, dockerignore, parseCopy, parseDockerfile, splitFlags, type Instruction, type Stage } from './dockerfile.js';
import { sqliteStore } from '../../support/config.js';


const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const dockerfile = parseDockerfile(readFileSync(join(root, 'Dockerfile'), 'utf8'));
const final = dockerfile.stages.at(-1)!;
const ignored = dockerignore(readFileSync(join(root, '.dockerignore'), 'utf8'));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { bin: Record<string, string>; engines: { node: string } };
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { dev?: boolean; hasInstallScript?: boolean }>;
};

const STORE_VOLUME = '/var/lib/smppd';

function all(stage: Stage, keyword: string): Instruction[] {
  return stage.instructions.filter((i) => i.keyword === keyword);
}

function last(stage: Stage, keyword: string): Instruction {
  const found = all(stage, keyword).at(-1);
  if (!found) throw new Error(`no ${keyword} in stage ${stage.name ?? '(final)'}`);
  return found;
}

function stageNamed(name: string): Stage {
  const stage = dockerfile.stages.find((s) => s.name === name);
  if (!stage) throw new Error(`no stage named ${name}`);
  return stage;
}

/** The shell commands of a stage's RUNs, split at `&&`, `||` and `;`. */
function commands(stage: Stage): string[] {
  return all(stage, 'RUN').flatMap((r) => r.args.split(/&&|\|\||;/).map((c) => c.trim()));
}

/** `path` as the image sees it at instruction `at`: relative paths resolve against the WORKDIR then. */
function inImage(stage: Stage, at: Instruction, path: string): string {
  const workdir = stage.instructions.filter((i) => i.keyword === 'WORKDIR' && i.line < at.line).reduce((dir, w) => posix.resolve(dir, w.args), '/');
  return posix.resolve(workdir, path);
}

/** The COPY instructions of a stage, with the destination resolved. */
function copies(stage: Stage): Array<ReturnType<typeof parseCopy> & { target: string; ins: Instruction }> {
  return all(stage, 'COPY').map((ins) => {
    const copy = parseCopy(ins.args);
    return { ...copy, target: inImage(stage, ins, copy.dest), ins };
  });
}

/** The repository file that the final image holds at `path` (copied from the build context). */
function repoPathOf(path: string): string {
  for (const c of copies(final).reverse()) {
    if (c.from !== undefined || c.sources.length !== 1) continue;
    const source = c.sources[0]!.replace(/\/+$/, '');
    if (statSync(join(root, source)).isDirectory()) {
      // A folder's content goes into the destination.
      if (path.startsWith(`${c.target}/`)) return posix.join(source, path.slice(c.target.length + 1));
    } else {
      // A file goes to the destination, or into it when the destination ends with '/' (or is '.').
      const into = /\/$|^\.$/.test(c.dest);
      if (path === (into ? posix.join(c.target, posix.basename(source)) : c.target)) return source;
    }
  }
  throw new Error(`${path} is not copied from the build context`);
}

function volumes(stage: Stage): string[] {
  return all(stage, 'VOLUME').flatMap((v) => (v.args.startsWith('[') ? commandOf(v.args) : v.args.split(/\s+/)));
}

function exposedPorts(stage: Stage): number[] {
  return all(stage, 'EXPOSE').flatMap((e) => e.args.split(/\s+/)).map((p) => Number(p.replace(/\/tcp$/, '')));
}

function healthcheck(): { flags: Map<string, string>; command: string[] } {
  const { flags, rest } = splitFlags(last(final, 'HEALTHCHECK').args);
  expect(rest).toMatch(/^CMD\s/);
  return { flags, command: commandOf(rest.replace(/^CMD\s+/, '')) };
}

function healthUrl(): URL {
  const script = healthcheck().command[2] ?? '';
  const m = /fetch\('([^']+)'\)/.exec(script);
  if (!m) throw new Error(`the health check does not fetch a URL: ${script}`);
  return new URL(m[1]!);
}

/** Production packages with an install script (a native build), by name. */
function productionInstallScripts(): string[] {
  return Object.entries(lock.packages)
    .filter(([path, p]) => path.startsWith('node_modules/') && p.hasInstallScript === true && p.dev !== true)
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
}

function exitCode(script: string): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', (code) => resolve(code));
  });
}

describe('Dockerfile', () => {
  it('builds in named stages from one base image, so a native module built in one runs in the last', () => {
    expect(dockerfile.stages.length).toBeGreaterThanOrEqual(2);
    const bases = new Set(dockerfile.stages.map((s) => s.base));
    expect(bases.size).toBe(1);
    for (const stage of dockerfile.stages.slice(0, -1)) expect(stage.name).toMatch(/^[a-z][\w-]*$/);
    for (const stage of dockerfile.stages) {
      for (const c of copies(stage)) if (c.from !== undefined) expect(stageNamed(c.from)).not.toBe(stage);
    }
  });

  it('runs on a release of the newest Node.js line package.json supports, pinned by digest', () => {
    const base = dockerfile.stages[0]!.base;
    const m = /^node:(\d+)\.\d+\.\d+-[a-z]+-slim@sha256:[0-9a-f]{64}$/.exec(base);
    expect(m, base).not.toBeNull();
    // engines.node is a list of caret ranges, one per supported line: "^20.19.0 || ^22.13.0 || ^24.0.0".
    const lines = pkg.engines.node.split('||').map((range) => Number(/^\s*\^(\d+)\./.exec(range)?.[1]));
    expect(lines.every(Number.isInteger), pkg.engines.node).toBe(true);
    expect(Number(m![1])).toBe(Math.max(...lines));
  });

  it('fills node_modules of the final image with npm ci --omit=dev, and runs the production install scripts', () => {
    const nodeModules = copies(final).filter((c) => c.target === posix.join(inImage(final, last(final, 'ENTRYPOINT'), '.'), 'node_modules'));
    expect(nodeModules).toHaveLength(1);
    const source = nodeModules[0]!.from === undefined ? final : stageNamed(nodeModules[0]!.from);
    const cmds = commands(source);
    const ci = cmds.filter((c) => /^npm ci(\s|$)/.test(c));
    expect(ci).toHaveLength(1);
    expect(ci[0]!.split(/\s+/)).toContain('--omit=dev');
    expect(cmds.filter((c) => /^npm (install|i|add)(\s|$)/.test(c))).toEqual([]);
    // npm ci would run "prepare" (tsc, a dev dependency): with --ignore-scripts, the native packages are rebuilt by name.
    const native = productionInstallScripts();
    expect(native).toContain('better-sqlite3');
    if (ci[0]!.split(/\s+/).includes('--ignore-scripts')) {
      const rebuild = cmds.find((c) => /^npm rebuild\s/.test(c));
      expect(rebuild, 'npm rebuild of the native packages').toBeDefined();
      expect(cmds.indexOf(rebuild!)).toBeGreaterThan(cmds.indexOf(ci[0]!));
      for (const name of native) expect(rebuild!.split(/\s+/)).toContain(name);
    }
  });

  it('compiles nothing in the final stage: no build tools, no npm install, only dist/ from the build stage', () => {
    const cmds = commands(final);
    expect(cmds.filter((c) => /apt-get|apk |\bg\+\+|\bmake\b|python3|^npm /.test(c))).toEqual([]);
    const dist = copies(final).filter((c) => c.from !== undefined && c.target.endsWith('/dist'));
    expect(dist).toHaveLength(1);
    expect(commands(stageNamed(dist[0]!.from!))).toContain('npm run build');
  });

  it('runs as a non-root user that owns the store volume', () => {
    const user = last(final, 'USER');
    const [name] = user.args.split(':');
    expect(['root', '0', '']).not.toContain(name);
    if (/^\d+$/.test(name!)) expect(commands(final).join('\n')).toMatch(new RegExp(`useradd .*--uid ${name}\\b`));
    expect(volumes(final)).toContain(STORE_VOLUME);
    // Created and chowned as root, before USER and VOLUME, so a new named volume starts owned by the user.
    const chown = all(final, 'RUN').find((r) => /\bchown\b/.test(r.args) && r.args.includes(STORE_VOLUME));
    expect(chown, `a RUN that chowns ${STORE_VOLUME}`).toBeDefined();
    expect(chown!.line).toBeLessThan(user.line);
    expect(chown!.line).toBeLessThan(last(final, 'VOLUME').line);
  });

  it('exposes the HTTP port and checks GET /healthz on it with node (the slim image has no curl)', () => {
    const { flags, command } = healthcheck();
    expect(command.slice(0, 2)).toEqual(['node', '-e']);
    const url = healthUrl();
    expect(url.hostname).toBe('127.0.0.1');
    expect(url.pathname).toBe('/healthz');
    expect(exposedPorts(final)).toEqual([Number(url.port)]);
    expect(flags.get('timeout')).toMatch(/^\d+s$/);
  });

  it('has a health check that exits 0 when /healthz answers 200, and 1 on 503 or when nothing listens', async () => {
    let status = 200;
    const paths: string[] = [];
    const server = createServer((req, res) => {
      paths.push(req.url ?? '');
      res.writeHead(status).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = healthUrl();
    const script = healthcheck().command[2]!.replace(url.origin, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      expect(await exitCode(script)).toBe(0);
      status = 503;
      expect(await exitCode(script)).toBe(1);
      expect(paths).toEqual(['/healthz', '/healthz']);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(await exitCode(script)).toBe(1);
  });

  it('copies only files that are in the repository and in the build context', () => {
    const sources = dockerfile.stages.flatMap((s) => copies(s)).filter((c) => c.from === undefined).flatMap((c) => c.sources);
    expect(sources).toContain('src');
    for (const source of sources) {
      expect(existsSync(join(root, source)), source).toBe(true);
      expect(ignored(source.replace(/^\.\/|\/+$/g, '')), `${source} is left out by .dockerignore`).toBe(false);
    }
  });

  it('keeps the host\'s artefacts out of the build context with .dockerignore', () => {
    for (const out of ['.git/HEAD', 'node_modules/better-sqlite3/package.json', 'dist/src/main.js', 'dist/test-results.json',
      'bench/results/run.json', 'coverage/index.html', 'smppd-demo.db', 'smppd-demo.db-wal', 'config/smppd.db', 'npm-debug.log']) {
      expect(ignored(out), out).toBe(true);
    }
    for (const kept of ['package.json', 'package-lock.json', 'tsconfig.build.json', 'src/main.ts', 'src/store/sqlite/store-worker.ts',
      'config/smppd.docker.yaml']) {
      expect(ignored(kept), kept).toBe(false);
    }
  });

  it('puts package.json beside dist/ (smppd version reads it)', () => {
    const workdir = inImage(final, last(final, 'ENTRYPOINT'), '.');
    expect(repoPathOf(posix.join(workdir, 'package.json'))).toBe('package.json');
  });

  it('starts the built entry point by default, with a config that loads, stores on the volume and listens on every interface', async () => {
    const argv = [...commandOf(last(final, 'ENTRYPOINT').args), ...commandOf(last(final, 'CMD').args)];
    const workdir = inImage(final, last(final, 'ENTRYPOINT'), '.');
    const flags = DAEMON_NODE_FLAGS.length;
    expect(argv.slice(0, 2 + flags)).toEqual(['node', ...DAEMON_NODE_FLAGS, posix.join(workdir, pkg.bin.smppd!)]);
    expect(argv.slice(2 + flags, 4 + flags)).toEqual(['start', '--config']);
    expect(argv).toHaveLength(5 + flags);

    const configFile = repoPathOf(argv[4 + flags]!);
    expect(configFile).toBe('config/smppd.docker.yaml');
    expect(ignored(configFile)).toBe(false);
    const config = await loadConfigFile(join(root, configFile), {});
    expect(sqliteStore(config).path.startsWith(`${STORE_VOLUME}/`), sqliteStore(config).path).toBe(true);
    expect(config.http.host).toBe('0.0.0.0');
    expect(exposedPorts(final)).toEqual([config.http.port]);
    expect(Number(healthUrl().port)).toBe(config.http.port);
  });
});
