/** A claim's `take` (`Store.claim`) as both stores read it. */
import { ErrorCode, SmppdError } from '../../core/errors.js';
import type { ClaimShares } from '../store.js';

/** `take` as shares: a number n is at most n of each client. Limits are whole numbers ≥ 0 (a fraction is cut). */
export function claimShares(take: number | ClaimShares): ClaimShares {
  if (typeof take === 'number') return { clients: [], others: wholeLimit(take) };
  return { clients: take.clients.map((c) => ({ client: c.client, limit: wholeLimit(c.limit) })), others: wholeLimit(take.others) };
}

/**
 * How many of a client's messages the claim takes at most, by name: one lookup per client with
 * queued parts, however many clients are listed (a claim walks every client with queued parts).
 */
export function shareLookup(shares: ClaimShares): (client: string) => number {
  const { clients, others } = shares;
  // None or one listed (the single-client claim): no map to build.
  if (clients.length === 0) return () => others;
  if (clients.length === 1) {
    const only = clients[0]!;
    return (client) => (client === only.client ? only.limit : others);
  }
  const limits = new Map(clients.map((c) => [c.client, c.limit]));
  return (client) => limits.get(client) ?? others;
}

function wholeLimit(n: number): number {
  if (Number.isNaN(n)) throw new SmppdError(ErrorCode.INTERNAL, 'a claim limit must be a number');
  return Math.max(0, Math.floor(n));
}
