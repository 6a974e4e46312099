/**
 * Every place this project starts the daemon runs node with DAEMON_NODE_FLAGS (src/cli/node-flags.ts):
 * `npm start` and the `smppd` command's shebang here; the systemd unit and the Docker image in
 * their own tests.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DAEMON_NODE_FLAGS } from '../../../src/cli/node-flags.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { bin: Record<string, string>; scripts: Record<string, string> };

describe('the node flags smppd is started with', () => {
  it('npm start passes them to node before the entry point', () => {
    expect(pkg.scripts['start']).toBe(`node ${DAEMON_NODE_FLAGS.join(' ')} ${pkg.bin['smppd']} start --config config/smppd.yaml`);
  });

  it('the smppd command\'s shebang passes them (env -S splits its arguments)', () => {
    const firstLine = readFileSync(join(root, 'src/main.ts'), 'utf8').split('\n')[0];
    expect(firstLine).toBe(`#!/usr/bin/env -S node ${DAEMON_NODE_FLAGS.join(' ')}`);
  });

  it('the built command keeps that shebang and runs through it', () => {
    const built = join(root, pkg.bin['smppd']!);
    expect(readFileSync(built, 'utf8').split('\n')[0]).toBe(`#!/usr/bin/env -S node ${DAEMON_NODE_FLAGS.join(' ')}`);
    expect(execFileSync(built, ['version'], { encoding: 'utf8' }).trim()).toMatch(/\d+\.\d+\.\d+/);
  });
});
