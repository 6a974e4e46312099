/**
 * `smppd upstream suspend|resume NAME`: stops or restarts sending to an upstream through the
 * running daemon's admin API (POST /admin/upstreams/{name}/suspend, …/resume). Both are
 * idempotent: suspending a suspended upstream keeps its first suspension.
 */
import { parseArgs } from 'node:util';
import type { SuspendAnswer } from '../ingress/http/admin-ui/admin-views.js';
import {
  ADMIN_EXIT, AdminCommandError, TARGET_OPTIONS, TARGET_USAGE, adminRequest, isParseArgsError, processIo, withTarget, type AdminIo,
} from './admin-client.js';
import { oneLine } from './text-table.js';

/** The longest reason the daemon keeps (the admin API contract). */
export const REASON_MAX = 200;

export const UPSTREAM_USAGE = `Usage: smppd upstream suspend NAME [--reason TEXT] [options]
       smppd upstream resume NAME [options]

suspend: the daemon sends nothing more to upstream NAME (upstreams[].name) until it is resumed
(docs/operations.md says what happens to its traffic meanwhile). Who suspended it (the admin
token's name), when and why show in 'smppd status' and on the status page.
resume: it sends again. Both are idempotent.

Exit code: 0 done; 1 the daemon answered an error (no upstream NAME: UNKNOWN_UPSTREAM); 2 usage
error; 3 the daemon cannot be reached; 4 the token is refused; 78 the config does not load or has
no admin token.

Options:
  --reason TEXT        suspend: why, for the others on call (at most ${REASON_MAX} characters)
  --json               print the daemon's JSON answer instead
${TARGET_USAGE}
  -h, --help           this text`;

class UsageError extends Error {}

/** `smppd upstream`: resolves to one of ADMIN_EXIT. */
export async function runUpstream(argv: string[], io: AdminIo = processIo): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (e) {
    if (!(e instanceof UsageError) && !isParseArgsError(e)) throw e;
    io.err(`smppd upstream: ${(e as Error).message}\n\n${UPSTREAM_USAGE}`);
    return ADMIN_EXIT.usage;
  }
  if (parsed === 'help') {
    io.out(UPSTREAM_USAGE);
    return ADMIN_EXIT.ok;
  }
  const { action, name, values } = parsed;
  return withTarget('upstream', values, io, async (target, out) => {
    const body = action === 'suspend' && values.reason !== undefined ? { reason: values.reason } : undefined;
    const answer = await adminRequest(target, 'POST', `/admin/upstreams/${encodeURIComponent(name)}/${action}`, body);
    if (!isSuspendAnswer(answer)) throw new AdminCommandError(`POST …/${action} answered without the upstream's state: is ${target.url} smppd's HTTP API?`, ADMIN_EXIT.refused);
    if (values.json) out.out(JSON.stringify(answer, null, 2));
    else out.out(describe(answer));
    return ADMIN_EXIT.ok;
  });
}

function parse(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: { ...TARGET_OPTIONS, reason: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) return 'help' as const;
  const [action, name, ...extra] = positionals;
  if (action !== 'suspend' && action !== 'resume') {
    throw new UsageError(action === undefined ? 'say suspend or resume' : `unknown action '${action}': suspend or resume`);
  }
  if (name === undefined || name === '') throw new UsageError('NAME is required: the upstream (upstreams[].name)');
  if (extra.length > 0) throw new UsageError(`one NAME only, got also ${extra.join(' ')}`);
  if (values.reason !== undefined) {
    if (action !== 'suspend') throw new UsageError('--reason goes with suspend');
    if (values.reason.length > REASON_MAX) throw new UsageError(`--reason has ${values.reason.length} characters; at most ${REASON_MAX}`);
  }
  return { action, name, values };
}

function describe(a: SuspendAnswer): string {
  if (!a.suspended) return `${oneLine(a.upstream)} resumed: sending`;
  const reason = a.suspended.reason === null ? '' : `: ${oneLine(a.suspended.reason)}`;
  return `${oneLine(a.upstream)} suspended since ${a.suspended.since} by ${oneLine(a.suspended.by)}${reason}`;
}

function isSuspendAnswer(v: unknown): v is SuspendAnswer {
  const a = v as Partial<SuspendAnswer> | null;
  return typeof a === 'object' && a !== null && typeof a.upstream === 'string' && (a.suspended === null || typeof a.suspended === 'object');
}
