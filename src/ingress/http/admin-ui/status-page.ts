/**
 * The status page (GET /admin/ in a browser): the facts of GET /admin/status as HTML tables — the
 * daemon and its store, each upstream (a suspended one marked, with who, when and why), each
 * bind, each client's queue — refreshing itself (html.ts). Pure: the status in, a string out;
 * every value from the daemon is escaped.
 */
import type { AdminStatus, BindState, BindStatus, UpstreamStatus } from './admin-views.js';
import { escapeHtml as e, page } from './html.js';
import { boundCount, daemonNow, formatDuration, formatRate, pace, secondsSince, upstreamState } from './status-facts.js';

/** Who is looking, for the header and the buttons. */
export interface Viewer {
  /** The admin token's name (admin.tokens[].name). */
  admin: string;
  /**
   * Signed in with the login form (a session cookie): the page shows the sign-out button and the
   * suspend and resume forms, which the browser posts with that cookie. With a bearer header
   * there is no cookie for them to carry, so they are left out.
   */
  session: boolean;
}

const STATE_CLASS: Readonly<Record<BindState, string>> = {
  bound: 'ok', connecting: 'warn', backoff: 'warn', stopping: 'warn', stopped: 'bad', failed: 'bad',
};

const cell = (text: string | number, numeric = false): string => `<td${numeric ? ' class="n"' : ''}>${e(text)}</td>`;

function header(status: AdminStatus, viewer: Viewer): string {
  const signOut = viewer.session
    ? ' · <form class="inline" method="post" action="/admin/logout"><button type="submit">Sign out</button></form>'
    : '';
  // A div, not a p: a form cannot sit inside a paragraph (the parser would close it first).
  return `<header><h1>smppd on ${e(status.instanceId)}</h1><div class="note">signed in as ${e(viewer.admin)}${signOut}</div></header>`;
}

/** Version, uptime and the store: the line above the tables. */
function facts(status: AdminStatus): string {
  const store = status.store;
  const latency = store.latencyMs === null ? '' : ` (${store.latencyMs.toFixed(1)} ms)`;
  const storeText = store.ok
    ? `<span class="ok">store ${e(store.kind)} ok${e(latency)}</span>`
    : `<span class="bad">store ${e(store.kind)} failing${e(latency)}: ${e(store.error ?? 'no detail')}</span>`;
  return `<p id="daemon">version ${e(status.version)} · up ${e(formatDuration(status.uptimeSeconds))} (since ${e(status.startedAt)}) · ${storeText}</p>`;
}

function suspendForm(u: UpstreamStatus): string {
  const action = `/admin/upstreams/${encodeURIComponent(u.name)}/${u.suspended ? 'resume' : 'suspend'}`;
  const reason = u.suspended ? '' : '<input type="text" name="reason" maxlength="200" placeholder="reason (optional)" aria-label="reason"> ';
  return `<form class="inline" method="post" action="${e(action)}">${reason}<button type="submit">${u.suspended ? 'Resume' : 'Suspend'}</button></form>`;
}

function upstreamRow(u: UpstreamStatus, now: number, viewer: Viewer): string {
  const state = upstreamState(u);
  const badge = `<span class="badge ${state === 'available' ? 'ok' : state === 'suspended' ? 'warn' : 'bad'}">${state}</span>`;
  let note = '';
  if (u.suspended) {
    const s = secondsSince(u.suspended.since, now);
    note = `suspended since ${e(u.suspended.since)}${s === null ? '' : ` (${e(formatDuration(s))})`} by ${e(u.suspended.by)}`
      + (u.suspended.reason === null ? '' : `: ${e(u.suspended.reason)}`);
    if (boundCount(u) === 0) note += '; no bind bound either';
  }
  return `<tr data-upstream="${e(u.name)}"${u.suspended ? ' class="suspended"' : ''}>${cell(u.name)}<td class="state">${badge}</td>`
    + `${cell(u.queued ?? '?', true)}${cell(`${boundCount(u)}/${u.binds.length}`, true)}<td>${note}</td>`
    + `${viewer.session ? `<td>${suspendForm(u)}</td>` : ''}</tr>`;
}

function bindTiming(b: BindStatus, now: number): string {
  if (b.state === 'bound' && b.boundSince !== null) {
    const s = secondsSince(b.boundSince, now);
    return s === null ? '' : `for ${formatDuration(s)}`;
  }
  if (b.state === 'backoff' && b.backoffSecondsLeft !== null) return `next try in ${formatDuration(b.backoffSecondsLeft)}`;
  return '';
}

function bindRow(b: BindStatus, now: number): string {
  const throttled = b.throttle.throttled ? `<span class="warn">throttled</span>` : 'no';
  return `<tr data-bind="${e(b.id)}">${cell(b.id)}<td class="state"><span class="badge ${STATE_CLASS[b.state] ?? 'warn'}">${e(b.state)}</span></td>`
    + `${cell(bindTiming(b, now))}${cell(formatRate(b.submitRate.last10s), true)}${cell(formatRate(b.submitRate.last1m), true)}`
    + `${cell(`${b.window.inUse}/${b.window.size}`, true)}${cell(b.window.held, true)}${cell(pace(b.throttle), true)}`
    + `<td>${throttled} (${e(b.throttle.episodes)} episodes)</td>${cell(b.detail)}</tr>`;
}

/** A column's heading; `n`: it holds numbers, aligned right. */
type Heading = string | { n: string };

function table(id: string, caption: string, headers: readonly Heading[], rows: readonly string[], empty: string): string {
  if (rows.length === 0) return `<section><h2>${caption}</h2><p class="note">${empty}</p></section>`;
  const th = (h: Heading): string => (typeof h === 'string' ? `<th>${h}</th>` : `<th class="n">${h.n}</th>`);
  return `<section><h2>${caption}</h2><table id="${id}"><thead><tr>${headers.map(th).join('')}</tr></thead>`
    + `<tbody>${rows.join('')}</tbody></table></section>`;
}

/** The part of the page the script swaps on each refresh: the daemon's line, every table, and when it was true. */
export function renderStatusMain(status: AdminStatus, viewer: Viewer): string {
  const now = daemonNow(status);
  const upstreams = table('upstreams', 'Upstreams', ['Upstream', 'State', { n: 'Queued' }, { n: 'Bound' }, 'Note', ...(viewer.session ? [''] : [])],
    status.upstreams.map((u) => upstreamRow(u, now, viewer)), 'No upstreams.');
  const binds = table('binds', 'Binds', ['Bind', 'State', '', { n: 'submit_sm/s 10 s' }, { n: '1 min' }, { n: 'Window' }, { n: 'Held' }, { n: 'Pace' }, 'Throttled', 'Detail'],
    status.upstreams.flatMap((u) => u.binds.map((b) => bindRow(b, now))), 'No binds.');
  const clients = table('clients', 'Clients', ['Client', { n: 'Queued' }, { n: 'Events pending' }, { n: 'Events dead' }],
    status.clients.map((c) => `<tr data-client="${e(c.name)}">${cell(c.name)}${cell(c.queued ?? '?', true)}${cell(c.outbox?.pending ?? '?', true)}${cell(c.outbox?.dead ?? '?', true)}</tr>`),
    'No clients.');
  const asOf = new Date(now).toISOString();
  return `<main id="status" data-as-of="${e(asOf)}">${facts(status)}${upstreams}${binds}${clients}<p class="note">As of ${e(asOf)}.</p></main>`;
}

/** The whole status page. */
export function renderStatusPage(status: AdminStatus, viewer: Viewer): string {
  const body = `${header(status, viewer)}${renderStatusMain(status, viewer)}<p class="note" id="refresh-note"></p>`;
  return page(`smppd on ${status.instanceId}`, body, true);
}
