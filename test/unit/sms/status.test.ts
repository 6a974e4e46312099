import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildStatusTable, classify, COMMAND_STATUS, type CommandStatusTable } from '../../../src/smpp/command-status.js';
import {
  aggregateStatus,
  DELIVERY_STATUSES,
  mergeStatus,
  retriesExhausted,
  statusFromReceipt,
  statusFromSubmitResp,
  type DeliveryStatus,
} from '../../../src/sms/status.js';

/** As the dispatcher does it: the smpp layer classifies, the domain maps. */
const classified = (code: number, table: CommandStatusTable) => ({ code, ...classify(table, code) });

describe('statusFromSubmitResp', () => {
  it('ESME_ROK is SENT', () => {
    expect(statusFromSubmitResp(classified(0, COMMAND_STATUS))).toEqual({ status: 'SENT' });
  });

  it('a permanent error is REJECTED with the name and code', () => {
    expect(statusFromSubmitResp(classified(0x0b, COMMAND_STATUS))).toEqual({ status: 'REJECTED', reason: 'ESME_RINVDSTADR (0x0000000B)' });
    expect(statusFromSubmitResp(classified(0x0a, COMMAND_STATUS))).toEqual({ status: 'REJECTED', reason: 'ESME_RINVSRCADR (0x0000000A)' });
  });

  it('a transient error changes nothing (retried)', () => {
    expect(statusFromSubmitResp(classified(0x58, COMMAND_STATUS))).toEqual({ status: null, class: 'retry', reason: 'ESME_RTHROTTLED (0x00000058)' });
    expect(statusFromSubmitResp(classified(0x14, COMMAND_STATUS))).toMatchObject({ status: null, class: 'retry' });
  });

  it("a bind-level error changes nothing: it is not the message's fault", () => {
    expect(statusFromSubmitResp(classified(0x04, COMMAND_STATUS))).toEqual({ status: null, class: 'fail', reason: 'ESME_RINVBNDSTS (0x00000004)' });
  });

  it('an unknown code is a rejection; a per-upstream table can make it transient', () => {
    expect(statusFromSubmitResp(classified(0x401, COMMAND_STATUS))).toEqual({ status: 'REJECTED', reason: 'UNKNOWN_0x00000401 (0x00000401)' });
    const table = buildStatusTable({ 0x401: { name: 'VENDOR_BUSY', class: 'retry' } });
    expect(statusFromSubmitResp(classified(0x401, table))).toEqual({ status: null, class: 'retry', reason: 'VENDOR_BUSY (0x00000401)' });
  });

  it('retries used up are FAILED with the last code', () => {
    expect(retriesExhausted(classified(0x58, COMMAND_STATUS))).toEqual({ status: 'FAILED', reason: 'retries exhausted: ESME_RTHROTTLED (0x00000058)' });
  });
});

describe('statusFromReceipt', () => {
  it('maps the Appendix B stat words as DESIGN.md says', () => {
    const table: [string, DeliveryStatus | null][] = [
      ['ENROUTE', 'SENT'], ['ACCEPTD', 'SENT'], ['DELIVRD', 'DELIVERED'], ['READ', 'READ'], ['UNDELIV', 'FAILED'],
      ['EXPIRED', 'FAILED'], ['DELETED', 'FAILED'], ['UNKNOWN', 'FAILED'], ['REJECTD', 'REJECTED'], ['BUFFRED', null], ['ACKED', null],
    ];
    for (const [stat, status] of table) expect(statusFromReceipt(stat, '000').status, stat).toBe(status);
  });

  it('accepts any case and the full §5.2.28 names', () => {
    expect(statusFromReceipt('delivrd', null).status).toBe('DELIVERED');
    expect(statusFromReceipt('DELIVERED', null).status).toBe('DELIVERED');
    expect(statusFromReceipt('UNDELIVERABLE', '1').status).toBe('FAILED');
  });

  it('gives failures a reason of stat and err', () => {
    expect(statusFromReceipt('UNDELIV', '034')).toEqual({ status: 'FAILED', reason: 'stat:UNDELIV err:034' });
    expect(statusFromReceipt('REJECTD', '011')).toEqual({ status: 'REJECTED', reason: 'stat:REJECTD err:011' });
    expect(statusFromReceipt('EXPIRED', null)).toEqual({ status: 'FAILED', reason: 'stat:EXPIRED' });
    expect(statusFromReceipt('DELIVRD', '000')).toEqual({ status: 'DELIVERED', reason: null });
  });

  it('a missing stat changes nothing', () => {
    expect(statusFromReceipt(null, null)).toEqual({ status: null });
  });
});

describe('mergeStatus', () => {
  it('moves forward along SUBMITTED → SENT → DELIVERED → READ', () => {
    expect(mergeStatus('SUBMITTED', 'SENT')).toEqual({ status: 'SENT', changed: true });
    expect(mergeStatus('SENT', 'DELIVERED')).toEqual({ status: 'DELIVERED', changed: true });
    expect(mergeStatus('DELIVERED', 'READ')).toEqual({ status: 'READ', changed: true });
    expect(mergeStatus('SUBMITTED', 'DELIVERED')).toEqual({ status: 'DELIVERED', changed: true });
  });

  it('records SENT after DELIVERED and ignores it', () => {
    expect(mergeStatus('DELIVERED', 'SENT')).toEqual({ status: 'DELIVERED', changed: false, ignored: 'regression' });
    expect(mergeStatus('SENT', 'SUBMITTED')).toEqual({ status: 'SENT', changed: false, ignored: 'regression' });
    expect(mergeStatus('READ', 'DELIVERED')).toEqual({ status: 'READ', changed: false, ignored: 'regression' });
    expect(mergeStatus('FAILED', 'SENT')).toEqual({ status: 'FAILED', changed: false, ignored: 'regression' });
  });

  it('the same status twice is a no-op', () => {
    for (const s of DELIVERY_STATUSES) expect(mergeStatus(s, s)).toEqual({ status: s, changed: false, ignored: 'duplicate' });
  });

  it('the first final status wins, except READ after DELIVERED', () => {
    expect(mergeStatus('DELIVERED', 'FAILED')).toEqual({ status: 'DELIVERED', changed: false, ignored: 'after_final' });
    expect(mergeStatus('FAILED', 'DELIVERED')).toEqual({ status: 'FAILED', changed: false, ignored: 'after_final' });
    expect(mergeStatus('REJECTED', 'FAILED')).toEqual({ status: 'REJECTED', changed: false, ignored: 'after_final' });
    expect(mergeStatus('FAILED', 'READ')).toEqual({ status: 'FAILED', changed: false, ignored: 'after_final' });
    expect(mergeStatus('READ', 'FAILED')).toEqual({ status: 'READ', changed: false, ignored: 'after_final' });
  });

  it('FAILED and REJECTED end a message that is not final yet', () => {
    expect(mergeStatus('SENT', 'FAILED')).toEqual({ status: 'FAILED', changed: true });
    expect(mergeStatus('SUBMITTED', 'REJECTED')).toEqual({ status: 'REJECTED', changed: true });
  });
});

describe('aggregateStatus (a message of several parts)', () => {
  it('is DELIVERED when every part is, READ counting as delivered', () => {
    expect(aggregateStatus(['DELIVERED', 'DELIVERED'])).toBe('DELIVERED');
    expect(aggregateStatus(['DELIVERED', 'READ'])).toBe('DELIVERED');
    expect(aggregateStatus(['READ', 'READ'])).toBe('READ');
  });

  it('is FAILED or REJECTED as soon as one part is; REJECTED when both occur', () => {
    expect(aggregateStatus(['SENT', 'FAILED', 'SUBMITTED'])).toBe('FAILED');
    expect(aggregateStatus(['DELIVERED', 'REJECTED'])).toBe('REJECTED');
    expect(aggregateStatus(['FAILED', 'REJECTED'])).toBe('REJECTED');
    expect(aggregateStatus(['REJECTED', 'FAILED'])).toBe('REJECTED');
  });

  it('is otherwise the least advanced status of its parts', () => {
    expect(aggregateStatus(['DELIVERED', 'SENT'])).toBe('SENT');
    expect(aggregateStatus(['READ', 'SUBMITTED', 'DELIVERED'])).toBe('SUBMITTED');
    expect(aggregateStatus(['SENT'])).toBe('SENT');
  });

  it('is SUBMITTED with no parts', () => {
    expect(aggregateStatus([])).toBe('SUBMITTED');
  });
});

/** Folds events into a part's status as the store does: SUBMITTED first, then merge each. */
const replay = (events: readonly DeliveryStatus[]): DeliveryStatus => events.reduce((s, e) => mergeStatus(s, e).status, 'SUBMITTED' as DeliveryStatus);

describe('order independence (property)', () => {
  /**
   * What one part can really go through: the path up to some point, or the path up to SENT
   * and then one failure. The events of such a story arrive in any order, some twice.
   */
  const story = fc.oneof(
    fc.integer({ min: 0, max: 3 }).map((rank) => ({ events: (['SUBMITTED', 'SENT', 'DELIVERED', 'READ'] as const).slice(0, rank + 1), end: (['SUBMITTED', 'SENT', 'DELIVERED', 'READ'] as const)[rank]! })),
    fc.tuple(fc.boolean(), fc.constantFrom('FAILED' as const, 'REJECTED' as const)).map(([sent, end]) => ({
      events: [...(sent ? (['SUBMITTED', 'SENT'] as const) : (['SUBMITTED'] as const)), end],
      end,
    })),
  );
  const arrival = story.chain((s) => fc.tuple(
    fc.constant(s.end),
    fc.shuffledSubarray([...s.events, ...s.events], { minLength: s.events.length * 2 }).chain((all) => fc.subarray(all, { minLength: 0 }).map((dups) => [...all, ...dups])),
  ).chain(([end, events]) => fc.tuple(fc.constant(end), fc.shuffledSubarray(events, { minLength: events.length }))));

  it('any permutation of the same events, with duplicates, ends in the same status', () => {
    fc.assert(fc.property(arrival, ([end, events]) => {
      expect(replay(events)).toBe(end);
    }));
  });

  it('with contradicting finals, the first final to arrive wins (READ may still follow DELIVERED)', () => {
    const events = fc.array(fc.constantFrom(...DELIVERY_STATUSES), { minLength: 1, maxLength: 12 });
    fc.assert(fc.property(events, (evs) => {
      const firstFinal = evs.find((e) => e !== 'SUBMITTED' && e !== 'SENT');
      const result = replay(evs);
      if (firstFinal === undefined) expect(result).toBe(evs.includes('SENT') ? 'SENT' : 'SUBMITTED');
      else if (firstFinal === 'DELIVERED' && evs.slice(evs.indexOf('DELIVERED')).includes('READ')) expect(result).toBe('READ');
      else expect(result).toBe(firstFinal);
    }));
  });

  it('the status of a message does not depend on the order of its parts', () => {
    const parts = fc.array(fc.constantFrom(...DELIVERY_STATUSES), { minLength: 1, maxLength: 10 });
    fc.assert(fc.property(parts, fc.integer(), (ps, seed) => {
      const shuffled = [...ps].sort((a, b) => ((a.charCodeAt(0) * 31 + seed) % 7) - ((b.charCodeAt(0) * 31 + seed) % 7));
      expect(aggregateStatus(shuffled)).toBe(aggregateStatus(ps));
    }));
  });
});
