import { existsSync, readFileSync } from 'node:fs';

/** package.json's version. Built, this file is dist/src/cli/version.js; run from the sources (the tests), src/cli/version.ts. */
export function version(): string {
  const path = ['../../package.json', '../../../package.json'].map((p) => new URL(p, import.meta.url)).find((u) => existsSync(u));
  if (!path) return 'unknown';
  const pkg = JSON.parse(readFileSync(path, 'utf8')) as { version: string };
  return pkg.version;
}
