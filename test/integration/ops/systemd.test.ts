/**
 * systemd/smppd.service: systemd's own checks (`systemd-analyze verify` and `security`, when the
 * machine has them), then what the unit must say: the install layout it starts, the hardening,
 * and a stop timeout longer than a graceful stop with the default settings.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { DAEMON_NODE_FLAGS } from '../../../src/cli/node-flags.js';
import { parseConfig } from '../../../src/config/load.js';
import { isTrue, parseUnitFile, seconds } from './unit-file.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const text = readFileSync(join(root, 'systemd/smppd.service'), 'utf8');
const service = parseUnitFile(text).get('Service') ?? new Map<string, string[]>();
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { bin: Record<string, string> };

const hasAnalyze = spawnSync('systemd-analyze', ['--version']).status === 0;
const work = mkdtempSync(join(tmpdir(), 'smppd-unit-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The value that counts: the last assignment. */
function setting(key: string): string | undefined {
  return service.get(key)?.at(-1);
}

/**
 * A copy named smppd.service, as installed but started from this checkout: verify checks that
 * ExecStart's program exists, and /usr/bin/node need not on a developer's machine.
 */
function checkoutCopy(dir: string, unitText: string): string {
  const path = join(mkdtempSync(join(dir, 'unit-')), 'smppd.service');
  writeFileSync(path, unitText.replaceAll('/usr/bin/node', process.execPath).replaceAll('/opt/smppd', root));
  return path;
}

function run(command: string, args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(command, args, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

/** systemd-analyze verify's lines about the unit file (other lines are the machine's own units). */
async function verify(unitText: string): Promise<{ about: string[]; output: string }> {
  const path = checkoutCopy(work, unitText);
  const { output } = await run('systemd-analyze', ['verify', path]);
  return { about: output.split('\n').filter((l) => l.includes('smppd.service')), output };
}

describe('systemd/smppd.service', () => {
  it('passes systemd-analyze verify (ExecStart pointed at this checkout)', async (ctx) => {
    if (!hasAnalyze) ctx.skip('systemd-analyze is not installed');
    const { about, output } = await verify(text);
    expect(about, output).toEqual([]);
  });

  it('would have verify report a mistake in it, so the check above can fail', async (ctx) => {
    if (!hasAnalyze) ctx.skip('systemd-analyze is not installed');
    const broken = text.replace('[Service]\n', '[Service]\nNoSuchSetting=1\n').replace(/^ExecStart=\S+/m, 'ExecStart=/nonexistent/node');
    const { about } = await verify(broken);
    expect(about.some((l) => l.includes("Unknown key 'NoSuchSetting'")), about.join('\n')).toBe(true);
    expect(about.some((l) => l.includes('/nonexistent/node')), about.join('\n')).toBe(true);
  });

  it('leaves an exposure of at most 2.0 in systemd-analyze security', async (ctx) => {
    if (!hasAnalyze) ctx.skip('systemd-analyze is not installed');
    const { output } = await run('systemd-analyze', ['security', '--offline=true', checkoutCopy(work, text)]);
    if (/unrecognized option|unknown option/i.test(output)) ctx.skip('this systemd-analyze has no --offline (systemd < 250)');
    const m = /Overall exposure level for smppd\.service: (\d+(?:\.\d+)?)/.exec(output);
    expect(m, output).not.toBeNull();
    expect(Number(m![1])).toBeLessThanOrEqual(2.0);
  });

  it('starts `smppd start` from the documented install layout, as an unprivileged user', () => {
    expect(setting('ExecStart')).toBe(`/usr/bin/node ${DAEMON_NODE_FLAGS.join(' ')} /opt/smppd/${pkg.bin.smppd} start --config /etc/smppd/smppd.yaml`);
    expect(setting('Type')).toBe('exec');
    expect(setting('User')).toMatch(/^[a-z][a-z0-9_-]*$/);
    expect(['root', '0']).not.toContain(setting('User'));
    expect(setting('Group')).toBe(setting('User'));
    for (const step of ['/opt/smppd/', 'npm ci && npm prune --omit=dev', '/etc/smppd/smppd.yaml', 'useradd --system']) {
      expect(text, `the install layout comment mentions ${step}`).toContain(step);
    }
  });

  it('keeps the store in its StateDirectory, the one place it can write under ProtectSystem=strict', () => {
    expect(setting('ProtectSystem')).toBe('strict');
    expect(setting('StateDirectory')).toBe('smppd');
    expect(setting('ConfigurationDirectory')).toBe('smppd');
    expect(setting('WorkingDirectory')).toBe('/var/lib/smppd');
    expect(setting('UMask')).toBe('0077');
    const documented = /store\.path: (\S+)/.exec(text);
    expect(documented?.[1]).toMatch(/^\/var\/lib\/smppd\/[^/]+\.db$/);
  });

  it('is hardened: no privileges, a read-only system, private /tmp and devices, hidden processes', () => {
    const on = ['NoNewPrivileges', 'ProtectHome', 'PrivateTmp', 'PrivateDevices', 'PrivateMounts', 'ProtectKernelTunables',
      'ProtectKernelModules', 'ProtectKernelLogs', 'ProtectControlGroups', 'ProtectClock', 'ProtectHostname',
      'RestrictNamespaces', 'RestrictRealtime', 'RestrictSUIDSGID', 'LockPersonality', 'RemoveIPC'];
    for (const key of on) expect(isTrue(setting(key)), key).toBe(true);
    expect({
      CapabilityBoundingSet: setting('CapabilityBoundingSet'),
      AmbientCapabilities: setting('AmbientCapabilities'),
      DevicePolicy: setting('DevicePolicy'),
      ProtectProc: setting('ProtectProc'),
      ProcSubset: setting('ProcSubset'),
      SystemCallArchitectures: setting('SystemCallArchitectures'),
    }).toEqual({
      CapabilityBoundingSet: '', AmbientCapabilities: '', DevicePolicy: 'closed', ProtectProc: 'invisible', ProcSubset: 'pid',
      SystemCallArchitectures: 'native',
    });
    // NETLINK: Fastify calls os.networkInterfaces() when http.listen is 0.0.0.0.
    expect(new Set(setting('RestrictAddressFamilies')?.split(/\s+/))).toEqual(new Set(['AF_UNIX', 'AF_INET', 'AF_INET6', 'AF_NETLINK']));
  });

  it('filters system calls to @system-service less @privileged, failing refused calls with EPERM, and keeps V8 working', () => {
    const filters = service.get('SystemCallFilter') ?? [];
    const allowed = filters.filter((f) => !f.startsWith('~')).flatMap((f) => f.split(/\s+/));
    const denied = filters.filter((f) => f.startsWith('~')).flatMap((f) => f.slice(1).split(/\s+/));
    expect(allowed).toEqual(expect.arrayContaining(['@system-service', 'pkey_alloc', 'pkey_free', 'pkey_mprotect']));
    expect(denied).toContain('@privileged');
    // Node raises its open-files limit with prlimit64, in @resources.
    expect(denied).not.toContain('@resources');
    expect(setting('SystemCallErrorNumber')).toBe('EPERM');
    // V8's JIT needs executable pages that it wrote: Node aborts under MemoryDenyWriteExecute.
    expect(isTrue(setting('MemoryDenyWriteExecute'))).toBe(false);
  });

  it('restarts after a failure and reloads clients on SIGHUP', () => {
    expect(setting('Restart')).toBe('on-failure');
    expect(seconds(setting('RestartSec') ?? '0.1')).toBeGreaterThanOrEqual(1);
    expect(setting('ExecReload')).toBe('/bin/kill -HUP $MAINPID');
  });

  it('waits longer for a stop than a graceful stop with the default settings takes: drain, unbind, webhooks', async () => {
    const config = await parseConfig([
      'upstreams: [{ name: u, host: 127.0.0.1, systemId: s, password: p }]',
      'clients: [{ name: c, token: 0123456789abcdef, webhook: { url: "https://hooks.example.com/e" } }]',
    ].join('\n'), work);
    const drain = config.shutdown.drainSeconds;
    const unbind = Math.min(drain, config.upstreams[0]!.responseTimeoutSeconds);
    const webhook = config.clients[0]!.webhook!.timeoutSeconds;
    expect({ drain, unbind, webhook }).toEqual({ drain: 10, unbind: 10, webhook: 10 });
    expect(setting('KillSignal') ?? 'SIGTERM').toBe('SIGTERM');
    expect(setting('TimeoutStopSec')).toBeDefined();
    expect(seconds(setting('TimeoutStopSec')!)).toBeGreaterThan(drain + unbind + webhook);
  });
});
