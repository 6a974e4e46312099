/**
 * `smppd messages find` and `smppd messages show`: what happened to a message, from the running
 * daemon's admin API (GET /admin/messages, GET /admin/messages/{id}).
 */
import { parseArgs } from 'node:util';
import { SystemClock } from '../core/clock.js';
import type { MessageList, MessageStory } from '../ingress/http/admin-ui/admin-views.js';
import {
  ADMIN_EXIT, AdminCommandError, TARGET_OPTIONS, TARGET_USAGE, adminRequest, isParseArgsError, processIo, withTarget, type AdminIo,
} from './admin-client.js';
import { renderMessageList } from './message-list.js';
import { renderMessageStory } from './message-story.js';

const STATUSES = ['SUBMITTED', 'SENT', 'DELIVERED', 'READ', 'FAILED', 'REJECTED'] as const;
/** The admin API's page size limits. */
const LIMIT_MAX = 500;

export const MESSAGES_USAGE = `Usage: smppd messages find --to NUMBER [--client NAME] [--since TIME] [--until TIME]
                           [--status STATUS] [--limit N] [--after CURSOR] [--json] [options]
       smppd messages show ID [--json] [options]

find: the messages to NUMBER, newest first, one line each (accepted, id, client, sender,
destination, upstream, status, parts, reason). When there are more than --limit, the last line
gives the --after CURSOR of the next page.
show: one message (its id from 'find', or the id sendSms answered): its fields and text, each
part (state, status, SMSC id, bind, attempts), its history (accepted, submitted, receipts) and the
events written for its client (webhook or event exchange) with their delivery state.

Exit code: 0 printed (also when find finds nothing); 1 the daemon answered an error (no message
ID: MESSAGE_NOT_FOUND; a parameter it refused); 2 usage error; 3 the daemon cannot be reached; 4
the token is refused; 78 the config does not load or has no admin token.

Options:
  --to NUMBER          find: the destination, digits with an optional leading + (447700900123)
  --client NAME        find: sent by this client (clients[].name)
  --since TIME         find: accepted at or after TIME: ISO 8601 (2026-11-27T08:00:00Z; without a
                       zone, this machine's local time) or an age: 30m, 2h, 1d (ago)
  --until TIME         find: accepted before TIME (the same forms)
  --status STATUS      find: ${STATUSES.join(', ')}
  --limit N            find: at most N messages, 1–${LIMIT_MAX}; default 50
  --after CURSOR       find: the next page, from the last line of the previous one
  --json               print the daemon's JSON answer instead
${TARGET_USAGE}
  -h, --help           this text`;

class UsageError extends Error {}

const OPTIONS = {
  ...TARGET_OPTIONS,
  to: { type: 'string' }, client: { type: 'string' }, since: { type: 'string' }, until: { type: 'string' },
  status: { type: 'string' }, limit: { type: 'string' }, after: { type: 'string' },
  json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
} as const;

/** `smppd messages`: resolves to one of ADMIN_EXIT. */
export async function runMessages(argv: string[], io: AdminIo = processIo): Promise<number> {
  let request: { values: ReturnType<typeof parse>['values']; path: string; action: 'find' | 'show' } | 'help';
  try {
    request = requestOf(parse(argv), (io.clock ?? new SystemClock()).wallNow());
  } catch (e) {
    if (!(e instanceof UsageError) && !isParseArgsError(e)) throw e;
    io.err(`smppd messages: ${(e as Error).message}\n\n${MESSAGES_USAGE}`);
    return ADMIN_EXIT.usage;
  }
  if (request === 'help') {
    io.out(MESSAGES_USAGE);
    return ADMIN_EXIT.ok;
  }
  const { values, path, action } = request;
  return withTarget('messages', values, io, async (target, out) => {
    const answer = await adminRequest(target, 'GET', path);
    const valid = action === 'find' ? isMessageList(answer) : isMessageStory(answer);
    if (!valid) throw new AdminCommandError(`GET ${path} answered without ${action === 'find' ? 'a list of messages' : 'a message'}: is ${target.url} smppd's HTTP API?`, ADMIN_EXIT.refused);
    if (values.json) out.out(JSON.stringify(answer, null, 2));
    else for (const line of action === 'find' ? renderMessageList(answer as MessageList) : renderMessageStory(answer as MessageStory)) out.out(line);
    return ADMIN_EXIT.ok;
  });
}

function parse(argv: string[]) {
  return parseArgs({ args: argv, strict: true, allowPositionals: true, options: OPTIONS });
}

/** The request path of the parsed command line, or a UsageError. `nowMs`: for ages (2h). */
function requestOf({ values, positionals }: ReturnType<typeof parse>, nowMs: number) {
  if (values.help) return 'help' as const;
  const [action, ...rest] = positionals;
  if (action === 'show') {
    const findOnly = (['to', 'client', 'since', 'until', 'status', 'limit', 'after'] as const).filter((k) => values[k] !== undefined);
    if (findOnly.length > 0) throw new UsageError(`${findOnly.map((k) => `--${k}`).join(', ')} go${findOnly.length === 1 ? 'es' : ''} with find, not show`);
    if (rest.length !== 1 || rest[0] === '') throw new UsageError(rest.length === 0 ? 'ID is required' : `one ID only, got ${rest.length}`);
    return { values, action, path: `/admin/messages/${encodeURIComponent(rest[0]!)}` } as const;
  }
  if (action !== 'find') throw new UsageError(action === undefined ? 'say find or show' : `unknown action '${action}': find or show`);
  if (rest.length > 0) throw new UsageError(`find takes options only, got ${rest.join(' ')}`);
  if (values.to === undefined) throw new UsageError('--to NUMBER is required');
  if (!/^\+?\d{1,20}$/.test(values.to)) throw new UsageError(`--to must be digits with an optional leading +, got '${values.to}'`);
  const query = new URLSearchParams({ destination: values.to });
  if (values.client !== undefined) query.set('client', values.client);
  if (values.since !== undefined) query.set('since', timeOf('--since', values.since, nowMs));
  if (values.until !== undefined) query.set('until', timeOf('--until', values.until, nowMs));
  if (values.status !== undefined) {
    const status = values.status.toUpperCase();
    if (!(STATUSES as readonly string[]).includes(status)) throw new UsageError(`--status must be one of ${STATUSES.join(', ')}, got '${values.status}'`);
    query.set('status', status);
  }
  if (values.limit !== undefined) {
    const n = Number(values.limit);
    if (!/^\d+$/.test(values.limit) || n < 1 || n > LIMIT_MAX) throw new UsageError(`--limit must be a whole number 1–${LIMIT_MAX}, got '${values.limit}'`);
    query.set('limit', String(n));
  }
  if (values.after !== undefined) query.set('after', values.after);
  return { values, action, path: `/admin/messages?${query.toString()}` } as const;
}

const AGE = /^(\d+)([smhd])$/;
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const ISO = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/** TIME as the ISO 8601 instant the daemon takes: an age before `nowMs`, or a date and time. */
export function timeOf(option: string, text: string, nowMs: number): string {
  const age = AGE.exec(text);
  if (age) return new Date(nowMs - Number(age[1]) * UNIT_MS[age[2] as keyof typeof UNIT_MS]).toISOString();
  // A date alone is its local midnight, as a date and time without a zone is local time.
  const t = ISO.test(text) ? Date.parse(text.length === 10 ? `${text}T00:00` : text.replace(' ', 'T')) : Number.NaN;
  if (Number.isNaN(t)) throw new UsageError(`${option} must be ISO 8601 (2026-11-27T08:00:00Z) or an age (30m, 2h, 1d), got '${text}'`);
  return new Date(t).toISOString();
}

function isMessageList(v: unknown): v is MessageList {
  const l = v as Partial<MessageList> | null;
  return typeof l === 'object' && l !== null && Array.isArray(l.messages) && (l.next === null || typeof l.next === 'string');
}

function isMessageStory(v: unknown): v is MessageStory {
  const s = v as Partial<MessageStory> | null;
  return typeof s === 'object' && s !== null && typeof s.message === 'object' && s.message !== null
    && Array.isArray(s.parts) && Array.isArray(s.history) && Array.isArray(s.events);
}
