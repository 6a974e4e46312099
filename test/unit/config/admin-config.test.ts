/** The `admin` section: tokens inline or from files, each unique among admins and clients, never quoted in a message. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { maskSecrets, parseConfig } from '../../../src/config/load.js';
import { configRefusal } from '../../support/config.js';

const dir = mkdtempSync(join(tmpdir(), 'smppd-admin-config-'));
const CLIENT_TOKEN = 'client-token-0123456789';
const ADMIN_TOKEN = 'admin-token-0123456789';
const base = `upstreams: [{ name: p, host: 127.0.0.1, systemId: sys, password: pw }]
clients: [{ name: app, token: ${CLIENT_TOKEN} }]
`;

const problem = (yaml: string): Promise<string> => configRefusal(() => parseConfig(yaml, dir));

describe('config admin', () => {
  it('is absent by default: the admin API is off', async () => {
    const c = await parseConfig(base, dir);
    expect(c.admin).toBeUndefined();
  });

  it('reads inline tokens and token files (one trailing newline trimmed), and masks them', async () => {
    writeFileSync(join(dir, 'ops.token'), 'file-admin-token-0123456789\n');
    const c = await parseConfig(`${base}admin:\n  tokens:\n    - { name: ops, tokenFile: ops.token }\n    - { name: lead, token: ${ADMIN_TOKEN} }\n`, dir);
    expect(c.admin).toEqual({ tokens: [{ name: 'ops', token: 'file-admin-token-0123456789' }, { name: 'lead', token: ADMIN_TOKEN }] });
    expect(JSON.stringify(maskSecrets(c))).not.toContain(ADMIN_TOKEN);
  });

  const cases: Array<[string, string, string]> = [
    ['no tokens', 'admin: { tokens: [] }\n', 'admin.tokens: must list at least one admin token; leave admin out to turn the admin API off'],
    ['a short token', 'admin: { tokens: [{ name: ops, token: short }] }\n', 'admin.tokens[0].token: must be at least 16 characters'],
    ['token and tokenFile', `admin: { tokens: [{ name: ops, token: ${ADMIN_TOKEN}, tokenFile: x }] }\n`, 'admin.tokens[0].token: give token or tokenFile, not both'],
    ['neither', 'admin: { tokens: [{ name: ops }] }\n', 'admin.tokens[0].token: one of token or tokenFile is required'],
    ['a bad name', `admin: { tokens: [{ name: "o p", token: ${ADMIN_TOKEN} }] }\n`, 'admin.tokens[0].name: must be 1–64 letters, digits, _ . @ or -'],
    ['two admins of one name', `admin: { tokens: [{ name: ops, token: ${ADMIN_TOKEN} }, { name: ops, token: other-admin-token-0123 }] }\n`,
      'admin.tokens[1].name: duplicates admin.tokens[0].name'],
    ['one token for two admins', `admin: { tokens: [{ name: a, token: ${ADMIN_TOKEN} }, { name: b, token: ${ADMIN_TOKEN} }] }\n`,
      'admin.tokens[1].token: the same token as admin.tokens[0]; each admin needs its own'],
    ['a client\'s token', `admin: { tokens: [{ name: ops, token: ${CLIENT_TOKEN} }] }\n`,
      'admin.tokens[0].token: the same token as clients[0]; an admin token must not be a client\'s'],
    ['an unknown key', `admin: { tokens: [{ name: ops, token: ${ADMIN_TOKEN} }], users: [] }\n`, 'admin.users: unknown key'],
    ['not a mapping', 'admin: yes\n', 'admin: must be a mapping { tokens }'],
  ];
  for (const [what, yaml, expected] of cases) {
    it(`refuses ${what}, naming the key path`, async () => {
      const message = await problem(`${base}${yaml}`);
      expect(message).toContain(expected);
      expect(message).not.toContain(ADMIN_TOKEN);
      expect(message).not.toContain(CLIENT_TOKEN);
    });
  }

  it('refuses a token file that holds a client\'s token, or a short one, without naming the file or the token', async () => {
    writeFileSync(join(dir, 'client.token'), `${CLIENT_TOKEN}\n`);
    writeFileSync(join(dir, 'short.token'), 'short\n');
    const message = await problem(`${base}admin:\n  tokens:\n    - { name: a, tokenFile: client.token }\n    - { name: b, tokenFile: short.token }\n    - { name: c, tokenFile: missing.token }\n`);
    expect(message).toContain('admin.tokens[0].tokenFile: the same token as clients[0]; an admin token must not be a client\'s');
    expect(message).toContain('admin.tokens[1].tokenFile: the token in the file must be at least 16 characters');
    expect(message).toContain(`admin.tokens[2].tokenFile: cannot read the file (relative to ${dir}): ENOENT`);
    expect(message).not.toContain(CLIENT_TOKEN);
    expect(message).not.toContain('client.token');
  });
});
