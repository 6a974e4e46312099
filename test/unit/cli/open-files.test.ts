/**
 * The start-up warning when http.maxConnections and the daemon's other descriptors exceed the
 * process's open-file limit (/proc/self/limits on Linux).
 */
import { describe, expect, it } from 'vitest';
import { descriptorsBesidesHttp, openFileLimit, warnIfOpenFilesShort } from '../../../src/cli/open-files.js';
import { parseConfig } from '../../../src/config/load.js';
import { recordingLog } from '../../support/http.js';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            256                  4096                 files
Max locked memory         8388608              8388608              bytes
`;

const config = (extra = '') => parseConfig(`upstreams:
  - { name: a, host: 127.0.0.1, systemId: s, password: pw, binds: 8 }
  - { name: b, host: 127.0.0.1, systemId: s, password: pw, binds: 4 }
clients:
  - { name: app, token: app-token-0123456789, webhook: { url: "https://hooks.example.com/x", concurrency: 20 } }
${extra}`, '/tmp');

describe('open files', () => {
  it('reads the soft limit of /proc/self/limits; none where it cannot be read or is unlimited', () => {
    expect(openFileLimit(() => LIMITS)).toBe(256);
    expect(openFileLimit(() => LIMITS.replace(/256 /, 'unlimited'))).toBeUndefined();
    expect(openFileLimit(() => { throw new Error('ENOENT'); })).toBeUndefined();
    // This machine: a number, on Linux.
    if (process.platform === 'linux') expect(openFileLimit()).toBeGreaterThan(0);
  });

  it('counts binds, webhook connections and the store beside the HTTP connections', async () => {
    const c = await config();
    expect(descriptorsBesidesHttp(c)).toBe(64 + 12 + 20);
  });

  it('warns when maxConnections and the rest exceed the limit, naming the most maxConnections may be', async () => {
    const lines: string[] = [];
    expect(warnIfOpenFilesShort(await config(), recordingLog(lines), 256)).toBe(true);
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!) as { level: string; event: string; maxConnections: number; openFileLimit: number; msg: string };
    expect(line).toMatchObject({ level: 'warn', event: 'open_files_short', maxConnections: 1000, openFileLimit: 256 });
    expect(line.msg).toContain('Lower http.maxConnections to at most 160');
  });

  it('says nothing when they fit, or when the limit is unknown', async () => {
    const lines: string[] = [];
    expect(warnIfOpenFilesShort(await config('http: { maxConnections: 160 }\n'), recordingLog(lines), 256)).toBe(false);
    expect(warnIfOpenFilesShort(await config(), recordingLog(lines), undefined)).toBe(false);
    expect(lines).toEqual([]);
  });
});
