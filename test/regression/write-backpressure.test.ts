import net from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { SystemClock } from '../../src/core/clock.js';
import { FrameReader } from '../../src/smpp/frame.js';
import { decodePdu, encodePdu } from '../../src/smpp/wire.js';
import type { Pool } from '../../src/smpp/pool.js';
import { makePool, part, until } from '../support/engine.js';

let server: net.Server | undefined;
let pool: Pool | undefined;
afterEach(async () => {
  await pool?.stop(10);
  await new Promise((r) => server ? server.close(r) : r(undefined));
});

/**
 * Regression for the smpp package's Session, which ignores the return value of socket.write:
 * against an SMSC that stops reading, it keeps writing into process memory without bound.
 * Here the SMSC answers the bind and then reads nothing more; the engine must stop writing
 * once the socket reports backpressure and keep the rest queued.
 */
it("regression (smpp Session ignores socket.write backpressure): stops writing when the SMSC stops reading", async () => {
  const sockets: net.Socket[] = [];
  server = net.createServer((socket) => {
    sockets.push(socket);
    const reader = new FrameReader();
    socket.on('data', (chunk) => {
      for (const frame of reader.push(chunk)) {
        const d = decodePdu(frame);
        if (d.ok && d.pdu.command === 'bind_transceiver') {
          socket.write(encodePdu({ command: 'bind_transceiver_resp', commandStatus: 0, sequenceNumber: d.pdu.sequenceNumber, systemId: 'stall' }));
          socket.pause(); // from now on, nothing is read: the kernel buffers fill up
        }
      }
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  const messages = 60_000;
  const big = 'x'.repeat(250); // ~300-byte PDUs: 18 MB in all, far more than loopback buffers hold
  pool = makePool({ port, window: messages, responseTimeoutMs: 600_000, maxQueued: messages }, new SystemClock());
  pool.start();
  await until(() => pool!.stats()[0]!.state === 'bound', 5_000, 'bound');
  for (let i = 0; i < messages; i++) void pool.submit('sim', [part(`49${i}`, big)]);
  // Let the writes run until the engine stops by itself.
  let last = -1;
  await until(async () => {
    const now = pool!.stats()[0]!.submitted;
    const settled = now === last;
    last = now;
    await new Promise((r) => setTimeout(r, 50));
    return settled;
  }, 10_000, 'writes to stop');
  const written = pool.stats()[0]!.submitted;
  expect(written).toBeGreaterThan(0);
  expect(written).toBeLessThan(messages);
  expect(pool.queued('sim')).toBe(messages - written);
  for (const s of sockets) s.destroy();
});
