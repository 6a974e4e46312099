/** A claim's `take` (`SubmitClaims.claim`) as both stores read it. */
import { ErrorCode, SmppdError } from '../../core/errors.js';
import type { ClaimShares } from '../claims.js';

/** `take` as shares: a number n is at most n of each client. Limits are whole numbers ≥ 0 (a fraction is cut). */
export function claimShares(take: number | ClaimShares): ClaimShares {
  if (typeof take === 'number') return { clients: [], others: wholeLimit(take) };
  return {
    clients: take.clients.map((c) => ({ client: c.client, limit: wholeLimit(c.limit) })),
    others: wholeLimit(take.others),
    ...(take.max !== undefined ? { max: wholeLimit(take.max) } : {}),
  };
}

/**
 * Walks a claim as `ClaimShares` says: first the clients with queued parts (`queued`, in name
 * order) that are not listed, `others` each; then the listed ones in list order, each up to its
 * limit; until `max` are taken. `take(client, limit)` takes at most `limit` (≥ 1) of the client's
 * ready messages, its oldest, and says how many it took.
 */
export function walkClaim(shares: ClaimShares, queued: readonly string[], take: (client: string, limit: number) => number): void {
  let left = shares.max ?? Infinity;
  if (shares.others > 0) {
    const listed = memberOf(shares.clients.map((c) => c.client));
    for (const client of queued) {
      if (left <= 0) return;
      if (!listed(client)) left -= take(client, Math.min(shares.others, left));
    }
  }
  if (shares.clients.length === 0) return;
  // A listed client with nothing queued costs no walk.
  const isQueued = memberOf(queued);
  for (const { client, limit } of shares.clients) {
    if (left <= 0) return;
    const n = Math.min(limit, left);
    if (n > 0 && isQueued(client)) left -= take(client, n);
  }
}

/**
 * Whether a name is among `names`, in one lookup however many there are (a claim asks it once
 * per client with queued parts); none or one (the single-client claim): no set to build.
 */
function memberOf(names: readonly string[]): (name: string) => boolean {
  if (names.length === 0) return () => false;
  if (names.length === 1) {
    const only = names[0];
    return (name) => name === only;
  }
  const set = new Set(names);
  return (name) => set.has(name);
}

function wholeLimit(n: number): number {
  if (Number.isNaN(n)) throw new SmppdError(ErrorCode.INTERNAL, 'a claim limit must be a number');
  return Math.max(0, Math.floor(n));
}
