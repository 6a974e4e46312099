/** A claim's `take` (`Store.claim`) as both stores read it. */
import { ErrorCode, SmppdError } from '../../core/errors.js';
import type { ClaimShares } from '../store.js';

/** `take` as shares: a number n is at most n of each client. Limits are whole numbers ≥ 0 (a fraction is cut). */
export function claimShares(take: number | ClaimShares): ClaimShares {
  if (typeof take === 'number') return { clients: [], others: wholeLimit(take) };
  return { clients: take.clients.map((c) => ({ client: c.client, limit: wholeLimit(c.limit) })), others: wholeLimit(take.others) };
}

/** How many of `client`'s messages the claim takes at most. */
export function shareOf(shares: ClaimShares, client: string): number {
  for (const c of shares.clients) if (c.client === client) return c.limit;
  return shares.others;
}

function wholeLimit(n: number): number {
  if (Number.isNaN(n)) throw new SmppdError(ErrorCode.INTERNAL, 'a claim limit must be a number');
  return Math.max(0, Math.floor(n));
}
