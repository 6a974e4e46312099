import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/observability/logger.js';

function capture(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({ write(chunk: Buffer, _enc, done) { chunks.push(chunk.toString()); done(); } });
  return { stream, text: () => chunks.join('') };
}

describe('logger redaction', () => {
  it('never writes a password, token or webhook secret, wherever it sits in a logged object', () => {
    const out = capture();
    const log = createLogger('info', out.stream);
    const client = { name: 'shop', token: 'tok-0123456789abcdef', tokenFile: 'tok-file-secret', webhook: { url: 'https://h.example/x', secret: 'whs-0123456789abcdef', secretFile: 'whs-file-secret' } };
    const config = { upstreams: [{ name: 'up', password: 'pw-12345' }], clients: [client], store: { kind: 'postgres', url: 'postgres://u:pgpw-secret@db/x' }, amqp: { url: 'amqp://u:mqpw-secret@mq' } };
    log.info({ config }, 'whole config under a key');
    log.info(config, 'config merged');
    log.info({ client }, 'one client');
    log.info({ webhook: client.webhook }, 'one webhook');
    log.info({ headers: { authorization: 'Bearer tok-0123456789abcdef' } }, 'headers');
    const text = out.text();
    for (const secret of ['tok-0123456789abcdef', 'tok-file-secret', 'whs-0123456789abcdef', 'whs-file-secret', 'pw-12345', 'pgpw-secret', 'mqpw-secret']) {
      expect(text).not.toContain(secret);
    }
    expect(text.match(/\[redacted\]/g)?.length).toBeGreaterThanOrEqual(12);
  });
});
