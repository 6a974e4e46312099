#!/usr/bin/env -S node --max-semi-space-size=32
/** smppd's entry point: picks the command; each command wires its own object graph. */
import { runCommand } from './cli/commands.js';

runCommand(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (e: unknown) => {
    console.error(e instanceof Error ? e.message : String(e));
    process.exitCode = 1;
  },
);
