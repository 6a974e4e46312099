/** `upstreams[].regulatoryTlvs` and `requireRegulatory`: tags in hex or decimal, and each refusal naming its key path. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { isSmppdError } from '../../../src/core/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'smppd-config-'));
const base = `upstreams:
  - name: provider
    host: 127.0.0.1
    systemId: smppclient1
    password: pw
`;

async function problem(extra: string): Promise<string> {
  try {
    await parseConfig(base + extra, dir);
  } catch (e) {
    if (isSmppdError(e, 'CONFIG_INVALID')) return e.message;
    throw e;
  }
  throw new Error('expected the config to be refused');
}

describe('upstreams[].regulatoryTlvs and requireRegulatory', () => {
  it('take tags as YAML hex or decimal integers (or the same quoted); neither key by default', async () => {
    const c = await parseConfig(`${base}    regulatoryTlvs: { peId: 0x1400, templateId: 5121, telemarketerId: "0x3FFF" }\n    requireRegulatory: true\n`, dir);
    expect(c.upstreams[0]!.regulatoryTlvs).toEqual({ peId: 0x1400, templateId: 0x1401, telemarketerId: 0x3fff });
    expect(c.upstreams[0]!.requireRegulatory).toBe(true);
    const plain = await parseConfig(base, dir);
    expect(plain.upstreams[0]!.regulatoryTlvs).toBeUndefined();
    expect(plain.upstreams[0]!.requireRegulatory).toBe(false);
  });

  const TAG = 'must be a vendor-specific tag from 0x1400 to 0x3FFF (SMPP v3.4 §5.3.2), hex (0x1400) or decimal (5120)';
  const cases: Array<[string, string, string]> = [
    ['a tag below the vendor range', '    regulatoryTlvs: { peId: 0x13FF }\n', `upstreams[0].regulatoryTlvs.peId: ${TAG}`],
    ['a tag above it', '    regulatoryTlvs: { templateId: 0x4000 }\n', `upstreams[0].regulatoryTlvs.templateId: ${TAG}`],
    ['a tag not whole', '    regulatoryTlvs: { telemarketerId: 5120.5 }\n', `upstreams[0].regulatoryTlvs.telemarketerId: ${TAG}`],
    ['a tag as a word', '    regulatoryTlvs: { peId: PE_ID }\n', `upstreams[0].regulatoryTlvs.peId: ${TAG}`],
    ['two fields on one tag', '    regulatoryTlvs: { peId: 0x1400, templateId: 5120 }\n',
      'upstreams[0].regulatoryTlvs.templateId: is the same tag as peId: each field needs its own'],
    ['an unknown field', '    regulatoryTlvs: { entityId: 0x1400 }\n', 'upstreams[0].regulatoryTlvs.entityId: unknown key'],
    ['not a mapping', '    regulatoryTlvs: 0x1400\n', 'upstreams[0].regulatoryTlvs: must be a mapping { peId, templateId, telemarketerId } of TLV tags'],
    ['requireRegulatory without regulatoryTlvs', '    requireRegulatory: true\n',
      'upstreams[0].requireRegulatory: needs regulatoryTlvs: the fields it requires are those regulatoryTlvs maps'],
    ['requireRegulatory with an empty mapping', '    regulatoryTlvs: {}\n    requireRegulatory: true\n',
      'upstreams[0].requireRegulatory: needs regulatoryTlvs: the fields it requires are those regulatoryTlvs maps'],
    ['requireRegulatory not a flag', '    requireRegulatory: yes please\n', 'upstreams[0].requireRegulatory: must be true or false'],
  ];
  it.each(cases)('refuses %s, naming the key path', async (_what, extra, expected) => {
    expect(await problem(extra)).toContain(expected);
  });
});
