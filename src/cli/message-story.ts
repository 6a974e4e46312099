/**
 * `smppd messages show` as text: GET /admin/messages/{id} — the message, its parts, what happened
 * to it in time order, and the events written for its client with their deliveries.
 */
import type { MessageStory } from '../ingress/http/admin-ui/admin-views.js';
import { oneLine, renderTable } from './text-table.js';

const dash = (v: string | number | null): string | number => (v === null || v === '' ? '-' : v);

/** The lines `smppd messages show` prints. */
export function renderMessageStory(story: MessageStory): string[] {
  const m = story.message;
  const fields: Array<[string, string]> = [
    ['client', m.client],
    ['from', m.sender],
    ['to', m.destination],
    ['route', m.route ?? '-'],
    ['upstream', m.upstream ?? '-'],
    ['batch', m.batchId === null ? '-' : String(m.batchId)],
    ['status', m.status],
    ['reason', m.reason ?? '-'],
    ['accepted', m.acceptedAt],
    ['updated', m.updatedAt],
    ['encoding', m.encoding],
    // JSON's quoting shows line breaks and control characters as escapes, on one line.
    ['text', JSON.stringify(m.text)],
  ];
  const lines = [`message ${oneLine(m.id)}`, ...fields.map(([k, v]) => `  ${k.padEnd(9)} ${oneLine(v)}`)];

  lines.push('', `parts (${story.parts.length})`);
  if (story.parts.length > 0) {
    lines.push(...renderTable(
      ['PART', 'STATE', 'STATUS', 'SMSC-ID', 'BIND', 'ATTEMPTS', 'SENT', 'UPDATED', 'REASON'],
      story.parts.map((p) => [p.part, p.state, p.status, dash(p.smscId), dash(p.bind), p.attempts, dash(p.sentAt), p.updatedAt, dash(p.reason)]),
    ));
  }

  lines.push('', 'history');
  if (story.history.length === 0) {
    lines.push('nothing recorded');
  } else {
    lines.push(...renderTable(
      ['AT', 'PART', 'STATUS', 'SOURCE', 'REASON'],
      story.history.map((h) => [h.at, h.part === null ? 'all' : String(h.part), h.status ?? '(unknown word)', h.source, dash(h.reason)]),
    ));
  }

  lines.push('', 'events');
  if (story.events.length === 0) {
    lines.push('none (no webhook or event exchange for this client)');
  } else {
    lines.push(...renderTable(
      ['ID', 'KIND', 'STATUS', 'STATE', 'ATTEMPTS', 'CREATED', 'NEXT', 'DELIVERED', 'LAST-ERROR'],
      story.events.map((e) => [
        String(e.id), e.kind, dash(e.status), e.state, e.attempts, e.createdAt, dash(e.nextAttemptAt), dash(e.deliveredAt ?? null), dash(e.lastError),
      ]),
    ));
  }
  return lines;
}
