/** Load for the kill -9 tests, and what the SMSC received twice. */
import type { SmscSimulator } from '../../src/simulator/simulator.js';

export interface SendLoad {
  /** Concurrent loops, each one request at a time. */
  clients: number;
  /** The daemon's HTTP port now (it changes across a restart). */
  port: () => number;
  token: string;
  senderId: string;
  /** Destinations are this and a 9-digit count. */
  prefix: string;
  /** Gets each destination answered 200. */
  answered: Set<string>;
  stop: () => boolean;
  /** The text sent to a destination; by default a short one (one part). */
  text?: (destination: string) => string;
}

/** Single sendSms calls until `stop()`; a refused or cut request (the daemon killed) promises nothing. */
export function sendUntil(o: SendLoad): Promise<void> {
  let next = 0;
  const sendOne = async (): Promise<void> => {
    const destination = `${o.prefix}${String(next++).padStart(9, '0')}`;
    try {
      const res = await fetch(`http://127.0.0.1:${o.port()}/sms/sendSms`, {
        method: 'POST',
        headers: { authorization: `Bearer ${o.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ senderId: o.senderId, destinationNumber: destination, message: o.text?.(destination) ?? `m ${destination}`, messageType: 'TEXT' }),
      });
      if (res.status === 200) o.answered.add(destination);
      else await res.text();
    } catch {
      // The daemon is gone: no answer, no promise made.
    }
  };
  return Promise.all(Array.from({ length: o.clients }, async () => {
    while (!o.stop()) await sendOne();
  })).then(() => {});
}

/** Destinations the simulator received a submit_sm for more than once (it must record them). */
export function duplicatedDestinations(sim: SmscSimulator): number {
  const counts = new Map<string, number>();
  for (const s of sim.recordedSubmits()) counts.set(s.destinationAddr, (counts.get(s.destinationAddr) ?? 0) + 1);
  return [...counts.values()].filter((n) => n > 1).length;
}

/** A part as the simulator tells it apart: its destination and its short_message (the UDH tells a long message's parts apart). */
export function partKey(destination: string, shortMessage: Buffer): string {
  return `${destination}:${shortMessage.toString('hex')}`;
}

/** How many times the simulator received each part (`partKey`). */
export function partCounts(sim: SmscSimulator): Map<string, number> {
  const counts = new Map<string, number>();
  for (const s of sim.recordedSubmits()) {
    const key = partKey(s.destinationAddr, s.shortMessage);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** Copies of a part the simulator received beyond the first, over all parts. */
export function duplicatedParts(sim: SmscSimulator): number {
  return [...partCounts(sim).values()].reduce((extra, n) => extra + n - 1, 0);
}

/** Whether the simulator received every part (`parts` of a destination, by default 1) of every destination in `answered`. */
export function everyAnsweredSent(sim: SmscSimulator, answered: ReadonlySet<string>, parts: (destination: string) => number = () => 1): boolean {
  const seen = new Map<string, Set<string>>();
  for (const s of sim.recordedSubmits()) {
    let got = seen.get(s.destinationAddr);
    if (got === undefined) seen.set(s.destinationAddr, got = new Set());
    got.add(s.shortMessage.toString('hex'));
  }
  return [...answered].every((d) => (seen.get(d)?.size ?? 0) >= parts(d));
}
