/**
 * A reader that stops early (`smppd check-config | head -1`) closes the pipe before the command
 * has written: the command ends quietly, exit 0, instead of dying on EPIPE with a stack trace.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('standard output closed by its reader', () => {
  it('check-config of the demo config ends with exit 0 and no EPIPE', async () => {
    const child = spawn(process.execPath, ['--import', './test/support/ts-register.mjs', 'src/main.ts', 'check-config', '--config', 'config/smppd.yaml'], {
      stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env['PATH'] },
    });
    // The reader is gone before the command prints a line.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(stderr).not.toMatch(/EPIPE/);
    expect(code).toBe(0);
  }, 20_000);
});
