/**
 * Where the bench finds the rest of the repository. Built, this file is
 * bench/build/bench/src/paths.js; the bench runs only built (`npm run bench`).
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

/** The built product: the daemon and the simulator run as `node dist/src/main.js start|simulate`. */
export const smppdMain = join(repoRoot, 'dist/src/main.js');

/** The bench's own entry: the processes it spawns (load client, webhook side, floor consumer) run through it. */
export const benchMain = join(repoRoot, 'bench/build/bench/main.js');
