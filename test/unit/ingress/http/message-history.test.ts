/** A message's history, derived from its story (ingress/http/admin/message-history.ts). */
import { describe, expect, it } from 'vitest';
import { messageHistory } from '../../../../src/ingress/http/admin/message-history.js';
import type { MessageStory } from '../../../../src/store/message-search.js';

const base: MessageStory['message'] = {
  id: 'm', client: 'acme', upstream: 'up1', route: null, batchId: null, source: 'ACME', destination: '44', text: 'x', encoding: 'GSM-7',
  status: 'DELIVERED', reason: null, acceptedAt: 1_000, updatedAt: 4_000,
};
const part = (p: Partial<MessageStory['parts'][number]>): MessageStory['parts'][number] => ({
  part: 1, state: 'done', status: 'SENT', reason: null, smscId: null, bind: null, attempts: 1, sentAt: null, updatedAt: 1_000, ...p,
});

describe('messageHistory', () => {
  it('tells accepted, each part sent, each receipt (ignored ones too) and the message\'s end, in time order', () => {
    const story: MessageStory = {
      message: base,
      parts: [part({ part: 1, status: 'DELIVERED', smscId: 'A', sentAt: 2_000, updatedAt: 3_000 }), part({ part: 2, status: 'DELIVERED', smscId: 'B', sentAt: 2_100, updatedAt: 4_000 })],
      receipts: [
        { part: 1, status: 'DELIVERED', reason: 'stat:DELIVRD', ignored: null, receivedAt: 3_000 },
        { part: 2, status: 'DELIVERED', reason: 'stat:DELIVRD', ignored: null, receivedAt: 4_000 },
        { part: 1, status: 'SENT', reason: 'stat:ENROUTE', ignored: 'regressing', receivedAt: 4_500 },
      ],
      events: [],
    };
    expect(messageHistory(story)).toEqual([
      { at: '1970-01-01T00:00:01.000Z', part: null, status: 'SUBMITTED', reason: null, source: 'accept' },
      { at: '1970-01-01T00:00:02.000Z', part: 1, status: 'SENT', reason: null, source: 'submit' },
      { at: '1970-01-01T00:00:02.100Z', part: 2, status: 'SENT', reason: null, source: 'submit' },
      { at: '1970-01-01T00:00:03.000Z', part: 1, status: 'DELIVERED', reason: 'stat:DELIVRD', source: 'receipt' },
      { at: '1970-01-01T00:00:04.000Z', part: 2, status: 'DELIVERED', reason: 'stat:DELIVRD', source: 'receipt' },
      { at: '1970-01-01T00:00:04.000Z', part: null, status: 'DELIVERED', reason: null, source: 'receipt' },
      { at: '1970-01-01T00:00:04.500Z', part: 1, status: 'SENT', reason: 'stat:ENROUTE (ignored: regressing)', source: 'receipt' },
    ]);
  });

  it('tells an SMSC\'s refusal as submit and smppd\'s own end as local', () => {
    const story: MessageStory = {
      message: { ...base, status: 'REJECTED', reason: 'ESME_RINVDSTADR (0x0000000B)', updatedAt: 2_000 },
      parts: [part({ status: 'REJECTED', reason: 'ESME_RINVDSTADR (0x0000000B)', updatedAt: 2_000 })],
      receipts: [], events: [],
    };
    expect(messageHistory(story).at(-1)).toEqual({ at: '1970-01-01T00:00:02.000Z', part: 1, status: 'REJECTED', reason: 'ESME_RINVDSTADR (0x0000000B)', source: 'submit' });
    const expired: MessageStory = { ...story, parts: [part({ status: 'FAILED', reason: 'validity expired before submission', updatedAt: 5_000 })] };
    expect(messageHistory(expired).at(-1)).toMatchObject({ part: 1, status: 'FAILED', source: 'local' });
  });
});
