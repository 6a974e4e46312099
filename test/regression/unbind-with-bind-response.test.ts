/**
 * Found by the SMSC fuzz test (test/integration/smsc-fuzz.property.test.ts): an SMSC that wrote
 * its bind response and an unbind in one write left the bind "bound" on a closed link for ever.
 * The response settled the bind's wait, the unbind closed the link before the session saw it
 * bound, and the close was never reported: no reconnect, no error, nothing sent again.
 */
import { afterEach, expect, it } from 'vitest';
import { SystemClock } from '../../src/core/clock.js';
import type { Pool } from '../../src/smpp/pool.js';
import { makePool, part } from '../support/engine.js';
import { FakeSmsc } from '../support/fake-smsc.js';
import { PduBytes } from '../support/pdu-bytes.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

it('a bind whose bind response comes in one read with an unbind (or a reset) reconnects, binds again and sends', async () => {
  // The first two links: unbind, then a bad command_length, in the bind response's write.
  const smsc = await FakeSmsc.start({
    afterBind: (n) => [new PduBytes(0x00000006, 7).build(), Buffer.from('0000000400000015', 'hex')][n],
  });
  cleanups.push(() => smsc.stop());
  const pool: Pool = makePool({ port: smsc.port }, new SystemClock());
  pool.start();
  cleanups.push(() => pool.stop(100));

  const outcome = await pool.submit('sim', [part('4915112345678')]);
  expect(outcome.parts).toEqual([expect.objectContaining({ kind: 'accepted' })]);
  expect(smsc.links.length).toBe(3);
  expect(smsc.links[0]!.seen.map((p) => p.commandId)).toEqual([0x00000009, 0x80000006]);
  expect(smsc.links[2]!.submits).toBe(1);
  expect(pool.stats()[0]).toMatchObject({ state: 'bound', reconnects: 2 });
});
