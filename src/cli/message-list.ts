/**
 * `smppd messages find` as text: one line per message of GET /admin/messages, newest first, and
 * how to ask for the next page when there is one.
 */
import type { MessageList } from '../ingress/http/admin-ui/admin-views.js';
import { renderTable } from './text-table.js';

/** The lines `smppd messages find` prints. */
export function renderMessageList(list: MessageList): string[] {
  if (list.messages.length === 0) return ['no messages'];
  const lines = renderTable(
    ['ACCEPTED', 'ID', 'CLIENT', 'FROM', 'TO', 'UPSTREAM', 'STATUS', 'PARTS', 'REASON'],
    list.messages.map((m) => [
      m.acceptedAt, m.id, m.client, m.sender, m.destination, m.upstream ?? '-', m.status, m.parts, m.reason ?? '-',
    ]),
  );
  if (list.next !== null) lines.push(`more: the same command with --after ${list.next}`);
  return lines;
}
