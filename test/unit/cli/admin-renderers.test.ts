/**
 * The admin commands' text: `smppd status`'s tables, `messages find`'s list and `messages show`'s
 * story, from answers shaped as the admin API contract gives them.
 */
import { describe, expect, it } from 'vitest';
import { renderMessageList } from '../../../src/cli/message-list.js';
import { renderMessageStory } from '../../../src/cli/message-story.js';
import { renderStatusTable } from '../../../src/cli/status-table.js';
import { oneLine, renderTable } from '../../../src/cli/text-table.js';
import { daemonNow, pace } from '../../../src/ingress/http/admin-ui/status-facts.js';
import { sampleMessageList, sampleMessageStory, sampleStatus } from '../../support/admin-samples.js';

/** The whitespace-split cells of the table line that starts with `first`. */
function row(lines: string[], first: string): string[] {
  const line = lines.find((l) => l.trim().split(/\s+/)[0] === first);
  if (line === undefined) throw new Error(`no line starting ${first} in:\n${lines.join('\n')}`);
  return line.trim().split(/\s+/);
}

describe('renderTable', () => {
  it('pads columns, right-aligns numbers and leaves no trailing blanks', () => {
    expect(renderTable(['NAME', 'N', 'NOTE'], [['a', 5, ''], ['long-name', 120, 'x']])).toEqual([
      'NAME         N  NOTE',
      'a            5',
      'long-name  120  x',
    ]);
  });

  it('keeps each row on one line whatever the text holds', () => {
    const [, line] = renderTable(['DETAIL'], [['bad\r\nthing\u001b[31m']]);
    expect(line).toBe('bad thing [31m');
    expect(oneLine('a\tb')).toBe('a b');
  });
});

describe('smppd status tables', () => {
  const lines = renderStatusTable(sampleStatus());

  it('says which daemon, how long up and how its store is', () => {
    expect(lines[0]).toBe('smppd 0.1.0 on host-a, up 2h03m (since 2026-11-27T00:00:00.000Z)');
    expect(lines[1]).toBe('store sqlite ok (1.2 ms)');
    expect(daemonNow(sampleStatus())).toBe(Date.parse('2026-11-27T02:03:00.000Z'));
  });

  it('gives each upstream its state, queue and bound binds, a suspended one marked with who and why', () => {
    expect(row(lines, 'demo')).toEqual(['demo', 'available', '12', '1/2']);
    expect(row(lines, 'backup')).toEqual(['backup', 'suspended', '0', '1/1']);
    expect(lines).toContain('backup suspended since 2026-11-27T02:00:00.000Z (3m00s) by ops: maintenance <window>');
  });

  it('gives each bind its state, time bound or to the next try, rates, window, pace and why', () => {
    expect(row(lines, 'BIND')).toEqual(['BIND', 'STATE', 'FOR', 'RATE10S', 'RATE1M', 'WINDOW', 'HELD', 'PACE', 'THROTTLED', 'DETAIL']);
    expect(row(lines, 'demo#0')).toEqual(['demo#0', 'bound', '1h03m', '950', '940', '37/100', '3', '1000/s', 'no(0)', '-']);
    expect(row(lines, 'demo#1')).toEqual(['demo#1', 'backoff', 'retry-in-4s', '0', '12.5', '0/100', '0', 'unpaced', 'yes(2)', 'connect', 'ECONNREFUSED', '10.0.0.7:2775']);
  });

  it('shows a bind\'s pace with the limit the SMSC was measured at, once there is one', () => {
    expect(pace({ rate: 1000, learnedLimit: null })).toBe('1000/s');
    expect(pace({ rate: 0, learnedLimit: null })).toBe('unpaced');
    expect(pace({ rate: 485.2, learnedLimit: 500.4 })).toMatch(/^485(\.2)?\/s \(limit 500(\.4)?\/s\)$/);
  });

  it('gives each client its queue and undelivered events', () => {
    expect(row(lines, 'app')).toEqual(['app', '12', '3', '0']);
    expect(row(lines, 'shop')).toEqual(['shop', '0', '0', '1']);
  });

  it('says when the store is failing, and why', () => {
    const status = sampleStatus();
    status.store = { kind: 'postgres', ok: false, latencyMs: null, error: 'connect ECONNREFUSED' };
    expect(renderStatusTable(status)[1]).toBe('store postgres FAILING: connect ECONNREFUSED');
  });

  it('shows ? for the counts the store could not give', () => {
    const status = sampleStatus();
    status.upstreams[0]!.queued = null;
    status.clients[0] = { name: 'app', queued: null, outbox: null };
    const out = renderStatusTable(status);
    expect(row(out, 'demo')).toEqual(['demo', 'available', '?', '1/2']);
    expect(row(out, 'app')).toEqual(['app', '?', '?', '?']);
  });

  it('says an upstream is unavailable when no bind is bound', () => {
    const status = sampleStatus();
    status.upstreams[0]!.available = false;
    expect(row(renderStatusTable(status), 'demo')[1]).toBe('unavailable');
  });
});

describe('smppd messages find list', () => {
  it('prints one line per message, newest first, and how to get the next page', () => {
    const lines = renderMessageList(sampleMessageList());
    expect(row(lines, 'ACCEPTED')).toEqual(['ACCEPTED', 'ID', 'CLIENT', 'FROM', 'TO', 'UPSTREAM', 'STATUS', 'PARTS', 'REASON']);
    expect(row(lines, '2026-11-27T02:01:00.000Z')).toEqual(['2026-11-27T02:01:00.000Z', '9f1c2d3e-0000-4000-8000-000000000002', 'app', 'Acme', '447700900123', 'demo', 'DELIVERED', '1', '-']);
    expect(row(lines, '2026-11-27T02:00:00.000Z').slice(6)).toEqual(['REJECTED', '2', 'ESME_RINVDSTADR', '(0x0000000B)']);
    expect(lines.at(-1)).toBe('more: the same command with --after cursor-abc');
  });

  it('says so when nothing matches', () => {
    expect(renderMessageList({ messages: [], next: null })).toEqual(['no messages']);
  });
});

describe('smppd messages show story', () => {
  const lines = renderMessageStory(sampleMessageStory());

  it('prints the message fields, its text on one line', () => {
    expect(lines[0]).toBe('message 9f1c2d3e-0000-4000-8000-000000000002');
    expect(lines).toContain('  status    DELIVERED');
    expect(lines).toContain('  batch     -');
    expect(lines).toContain('  text      "Your code is 1234\\nThanks"');
  });

  it('prints its parts, its history in order and its events, delivered ones with their time', () => {
    expect(row(lines, '1')).toEqual(['1', 'done', 'DELIVERED', '0A1B2C', 'demo#0', '1', '2026-11-27T02:01:00.100Z', '2026-11-27T02:01:02.000Z', '-']);
    const history = lines.slice(lines.indexOf('history'));
    expect(history.filter((l) => l.startsWith('2026')).map((l) => l.split(/\s+/).slice(1, 4))).toEqual([
      ['all', 'SUBMITTED', 'accept'], ['1', 'SENT', 'submit'], ['1', 'DELIVERED', 'receipt'],
    ]);
    expect(row(lines, '40')).toEqual(['40', 'status', 'SENT', 'delivered', '1', '2026-11-27T02:01:00.120Z', '-', '2026-11-27T02:01:00.300Z', '-']);
    expect(row(lines, '41')).toEqual(['41', 'status', 'DELIVERED', 'pending', '2', '2026-11-27T02:01:02.000Z', '2026-11-27T02:01:10.000Z', '-', 'HTTP', '502']);
  });
});
