/** Suspensions: stored first, then applied; idempotent; another instance's taken up on a refresh, never undone by a stale read. */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { isSmppdError } from '../../../src/core/errors.js';
import { silentLog } from '../../../src/core/log.js';
import { Suspensions } from '../../../src/dispatch/suspensions.js';
import type { UpstreamSuspension, UpstreamSuspensions } from '../../../src/store/upstream-suspensions.js';

/** A store of suspensions in memory; `hold` makes the next list wait until released. */
function memoryStore() {
  const rows = new Map<string, UpstreamSuspension>();
  let held: { release: () => void; reached: Promise<void> } | undefined;
  let reached: () => void = () => {};
  const store: UpstreamSuspensions = {
    async listSuspensions() {
      const snapshot = [...rows.values()];
      if (held) {
        reached();
        await new Promise<void>((resolve) => { held!.release = resolve; });
      }
      return snapshot;
    },
    async suspendUpstream(s) {
      if (!rows.has(s.upstream)) rows.set(s.upstream, s);
      return rows.get(s.upstream)!;
    },
    async resumeUpstream(upstream) {
      return rows.delete(upstream);
    },
  };
  return {
    store, rows,
    hold() {
      held = { release: () => {}, reached: new Promise<void>((resolve) => { reached = resolve; }) };
      return held;
    },
    unhold() { held = undefined; },
  };
}

function rig() {
  const m = memoryStore();
  const applied: string[] = [];
  const suspensions = new Suspensions({
    store: m.store, upstreams: ['a', 'b'], clock: new ManualClock(0, Date.UTC(2026, 0, 1)), log: silentLog,
    apply: (u, on) => applied.push(`${u}:${on ? 'suspended' : 'resumed'}`),
  });
  return { ...m, applied, suspensions };
}

describe('Suspensions', () => {
  it('stores a suspension, then applies it; again is the same one; resume undoes it', async () => {
    const { suspensions, rows, applied } = rig();
    const s = await suspensions.suspend('a', 'ops', 'maintenance');
    expect(s).toEqual({ upstream: 'a', since: Date.UTC(2026, 0, 1), by: 'ops', reason: 'maintenance' });
    expect(rows.get('a')).toEqual(s);
    expect(await suspensions.suspend('a', 'lead', null)).toEqual(s);
    expect(suspensions.get('a')).toEqual(s);
    expect(applied).toEqual(['a:suspended']);
    await suspensions.resume('a', 'ops');
    await suspensions.resume('a', 'ops');
    expect(rows.size).toBe(0);
    expect(suspensions.isSuspended('a')).toBe(false);
    expect(applied).toEqual(['a:suspended', 'a:resumed']);
  });

  it('refuses an upstream the config does not have', async () => {
    const { suspensions } = rig();
    const refused = await suspensions.suspend('nope', 'ops', null).catch((e: unknown) => e);
    expect(isSmppdError(refused, 'UNKNOWN_UPSTREAM')).toBe(true);
  });

  it('takes up what another instance suspended and resumed, and ignores names it does not have', async () => {
    const { suspensions, rows, applied } = rig();
    rows.set('b', { upstream: 'b', since: 1, by: 'other', reason: null });
    rows.set('gone', { upstream: 'gone', since: 1, by: 'other', reason: null });
    await suspensions.load();
    expect(suspensions.get('b')).toMatchObject({ by: 'other' });
    expect(suspensions.isSuspended('gone')).toBe(false);
    rows.delete('b');
    await suspensions.refresh();
    expect(applied).toEqual(['b:suspended', 'b:resumed']);
  });

  it('a read that began before a suspend of this instance does not undo it', async () => {
    const m = rig();
    const held = m.hold();
    const refreshing = m.suspensions.refresh();
    await held.reached;
    m.unhold();
    await m.suspensions.suspend('a', 'ops', null);
    held.release();
    await refreshing;
    expect(m.suspensions.isSuspended('a')).toBe(true);
    expect(m.applied).toEqual(['a:suspended']);
  });
});
