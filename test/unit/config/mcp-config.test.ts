/** The `mcp` section: off by default, `enabled` a flag, every refusal naming its key path. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { configRefusal } from '../../support/config.js';

const dir = mkdtempSync(join(tmpdir(), 'smppd-mcp-config-'));
const base = 'upstreams: [{ name: p, host: 127.0.0.1, systemId: sys, password: pw }]\n';

describe('config mcp', () => {
  it('is off unless enabled', async () => {
    expect((await parseConfig(base, dir)).mcp).toBeUndefined();
    expect((await parseConfig(`${base}mcp: { enabled: false }\n`, dir)).mcp).toBeUndefined();
    expect((await parseConfig(`${base}mcp: {}\n`, dir)).mcp).toBeUndefined();
    expect((await parseConfig(`${base}mcp: { enabled: true }\n`, dir)).mcp).toEqual({ enabled: true });
  });

  it.each([
    ['enabled not a flag', 'mcp: { enabled: yes please }\n', 'mcp.enabled: must be true or false'],
    ['an unknown key', 'mcp: { enabled: true, path: /agents }\n', 'mcp.path: unknown key'],
    ['not a mapping', 'mcp: true\n', 'mcp: must be a mapping'],
  ])('refuses %s, naming the key', async (_name, yaml, text) => {
    expect(await configRefusal(() => parseConfig(`${base}${yaml}`, dir))).toContain(text);
  });
});
