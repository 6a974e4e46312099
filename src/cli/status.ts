/**
 * `smppd status`: GET /admin/status of a running daemon, as compact tables (status-table.ts) or
 * the JSON as the daemon answered it.
 */
import { parseArgs } from 'node:util';
import type { AdminStatus } from '../ingress/http/admin-ui/admin-views.js';
import {
  ADMIN_EXIT, AdminCommandError, TARGET_OPTIONS, TARGET_USAGE, adminRequest, isParseArgsError, processIo, withTarget, type AdminIo,
} from './admin-client.js';
import { renderStatusTable } from './status-table.js';

export const STATUS_USAGE = `Usage: smppd status [--json] [--config FILE | --url URL --token TOKEN]

Prints what a running daemon is doing (GET /admin/status of its admin API): its store, each
upstream (available, unavailable or suspended, parts queued), each bind (state, how long bound,
submit_sm per second, window in use, pace and throttling, why it is not bound) and each client's
queue and undelivered events.

Exit code: 0 printed; 1 the daemon answered an error; 2 usage error; 3 the daemon cannot be
reached; 4 the token is refused (401, or 403 for a client's token); 78 the config does not load or
has no admin token.

Options:
  --json               print the daemon's JSON answer instead
${TARGET_USAGE}
  -h, --help           this text`;

/** `smppd status`: resolves to one of ADMIN_EXIT. */
export async function runStatus(argv: string[], io: AdminIo = processIo): Promise<number> {
  let values: { json?: boolean; help?: boolean; config?: string; url?: string; token?: string };
  try {
    ({ values } = parseArgs({ args: argv, strict: true, allowPositionals: false, options: { ...TARGET_OPTIONS, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } }));
  } catch (e) {
    if (!isParseArgsError(e)) throw e;
    io.err(`smppd status: ${(e as Error).message}\n\n${STATUS_USAGE}`);
    return ADMIN_EXIT.usage;
  }
  if (values.help) {
    io.out(STATUS_USAGE);
    return ADMIN_EXIT.ok;
  }
  return withTarget('status', values, io, async (target, out) => {
    const status = await adminRequest(target, 'GET', '/admin/status');
    if (!isAdminStatus(status)) throw new AdminCommandError(`GET /admin/status answered without a status: is ${target.url} smppd's HTTP API?`, ADMIN_EXIT.refused);
    if (values.json) out.out(JSON.stringify(status, null, 2));
    else for (const line of renderStatusTable(status)) out.out(line);
    return ADMIN_EXIT.ok;
  });
}

/** Enough of the shape to render it: the lists the tables walk. */
function isAdminStatus(v: unknown): v is AdminStatus {
  const s = v as Partial<AdminStatus> | null;
  return typeof s === 'object' && s !== null && Array.isArray(s.upstreams) && Array.isArray(s.clients) && typeof s.store === 'object'
    && s.upstreams.every((u) => Array.isArray((u as Partial<AdminStatus['upstreams'][number]> | null)?.binds));
}
