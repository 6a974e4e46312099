/**
 * The MCP server's tools (modelcontextprotocol.io, 2025-11-25 "Tools"): the HTTP API's SMS
 * operations for an AI agent, run for the client whose token the request carried. Each runs what
 * its HTTP route runs (send.ts, status.ts, batches.ts), so validation, limits and refusals are the
 * HTTP API's: a refusal is a tool result with `isError: true` whose structuredContent (and text,
 * as JSON) is the five-field body with the errorCode HTTP would answer, and `requestUri` "/mcp".
 *
 * The SDK's low-level `Server` rather than `McpServer`: `McpServer` checks the arguments against
 * the tool's zod schema itself and answers a failure in its own words, where the API's refusal
 * names each field its own way (`parseInput`). The JSON Schema each tool advertises is generated
 * from the same zod schema that checks it. No tool declares an outputSchema: the SDK's client
 * checks any structuredContent against it, refusals included, which the five fields would fail.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool, type ToolAnnotations,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { ApiClient } from '../../api/auth.js';
import { errorBodyAt, toApiError } from '../../api/errors.js';
import { IDEMPOTENCY_KEY_MAX } from '../../api/idempotency-key.js';
import { identifySchema, parseInput, sendSmsSchema } from '../../api/validation.js';
import type { Log } from '../../core/log.js';
import { batchList } from './batches.js';
import type { RouteContext } from './context.js';
import { identifySms, sendSms } from './send.js';
import { messageStatusOf } from './status.js';

/** The path the server answers at: the `requestUri` of every refusal. */
export const MCP_PATH = '/mcp';

const IDEMPOTENCY_KEY_TOOL_RULE = `must be 1–${IDEMPOTENCY_KEY_MAX} printable ASCII characters (U+0020–U+007E)`;

/** sendSms's fields, and the Idempotency-Key header as an argument (a tool call has no headers of its own). */
const sendSmsToolSchema = sendSmsSchema.extend({
  idempotencyKey: z.string({ error: IDEMPOTENCY_KEY_TOOL_RULE })
    .min(1, { error: IDEMPOTENCY_KEY_TOOL_RULE }).max(IDEMPOTENCY_KEY_MAX, { error: IDEMPOTENCY_KEY_TOOL_RULE })
    .regex(/^[\x20-\x7e]*$/, { error: IDEMPOTENCY_KEY_TOOL_RULE }).nullish()
    .meta({ description: 'Optional. A call repeated with the same key and the same fields is answered the first call\'s message id, and nothing is sent twice (the Idempotency-Key header of POST /sms/sendSms, sharing its keys).' }),
});

const messageStatusSchema = z.strictObject({
  messageId: z.string({ error: (i) => (i.input === undefined || i.input === null ? 'is required' : 'must be a string') })
    .min(1, { error: 'must not be empty' })
    .meta({ description: 'The id send_sms (or POST /sms/sendSms) answered.' }),
});

const noArguments = z.strictObject({});

/** What a tool answers: its text (the HTTP API's response body) and the same as an object. */
interface ToolAnswer {
  text: string;
  structured: Record<string, unknown>;
}

interface ToolDefinition {
  title: string;
  description: string;
  /** Checks the arguments (through the run), and is advertised as JSON Schema. */
  input: z.ZodType;
  annotations: ToolAnnotations;
  run(ctx: RouteContext, client: ApiClient, args: Record<string, unknown>): Promise<ToolAnswer>;
}

const READ_ONLY: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };

const json = (value: object): ToolAnswer => ({ text: JSON.stringify(value), structured: { ...value } });

export const TOOLS: Readonly<Record<string, ToolDefinition>> = {
  send_sms: {
    title: 'Send an SMS',
    description: 'Sends one SMS, as POST /sms/sendSms: senderId (an approved sender ID), destinationNumber (country code and number, '
      + 'digits only), message, messageType (TEXT for GSM-7, UNICODE for anything else); optionally a schedule (isSchedule, time, gmt), '
      + 'expiryHour, campaignName. Answers the message id once the message is stored; get_message_status follows it. Each call costs '
      + 'one request of the client\'s rate limit, as an HTTP send does. Give an idempotencyKey to retry safely after a lost answer.',
    input: sendSmsToolSchema,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    async run(ctx, client, args) {
      // Before the arguments are read, as the HTTP route takes it before the body is.
      const limited = ctx.takeSendToken(client.name);
      if (limited) throw limited;
      parseInput(sendSmsToolSchema, args);
      const { idempotencyKey, ...fields } = args;
      const messageId = await sendSms(ctx, client, fields, typeof idempotencyKey === 'string' ? idempotencyKey : undefined);
      return { text: messageId, structured: { messageId } };
    },
  },
  identify_sms: {
    title: 'Analyse an SMS text',
    description: 'As POST /sms/identify: how a text would be sent (encoding, characters, parts, characters per part) by the upstream '
      + 'the route of destinationNumber would take now (without it: the route of any number for this client). Sends nothing.',
    input: identifySchema,
    annotations: READ_ONLY,
    run: async (ctx, client, args) => json(identifySms(ctx, client, args)),
  },
  get_message_status: {
    title: 'Status of a message',
    description: 'As GET /sms/status/{messageId}: the delivery status of one of this client\'s messages (SUBMITTED, SENT, DELIVERED, '
      + 'READ, FAILED or REJECTED), its reason, and each part\'s status.',
    input: messageStatusSchema,
    annotations: READ_ONLY,
    async run(ctx, client, args) {
      const { messageId } = parseInput(messageStatusSchema, args);
      return json(await messageStatusOf(ctx, client.name, messageId));
    },
  },
  list_batches: {
    title: 'List SMS jobs',
    description: 'As GET /sms/list: every batch (bulk job, or scheduled send) of this client, with its totals and whether it is active. '
      + 'The structured answer is { batches: [...] }; the text is the list as /sms/list answers it.',
    input: noArguments,
    annotations: READ_ONLY,
    async run(ctx, client, args) {
      parseInput(noArguments, args);
      const batches = await batchList(ctx, client.name);
      return { text: JSON.stringify(batches), structured: { batches } };
    },
  },
};

/** tools/list's answer: the same for every client, built once. */
const TOOL_LIST: Tool[] = Object.entries(TOOLS).map(([name, t]) => ({
  name, title: t.title, description: t.description, annotations: t.annotations,
  inputSchema: z.toJSONSchema(t.input, { io: 'input', unrepresentable: 'any' }) as Tool['inputSchema'],
}));

/** A refusal as a tool result: the five-field body, and Retry-After as `retryAfterSeconds` (a tool result has no headers). */
function refusal(e: unknown, tool: string, log: Log): CallToolResult {
  const { error, internal } = toApiError(e);
  if (internal) {
    const err = e instanceof Error ? { name: e.name, message: e.message, stack: e.stack } : { value: String(e) };
    log.error({ event: 'mcp_internal_error', tool, err }, 'MCP tool failed');
  }
  const retry = error.headers['retry-after'];
  const body = { ...errorBodyAt(error.code, error.message, MCP_PATH, error.status), ...(retry !== undefined ? { retryAfterSeconds: Number(retry) } : {}) };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
}

/**
 * A server for one HTTP request of `client` (stateless: nothing outlives the request, so nothing
 * of one client's can reach another's). `version`: smppd's, for the initialize answer.
 */
export function mcpServerFor(ctx: RouteContext, client: ApiClient, version: string, log: Log): Server {
  const server = new Server({ name: 'smppd', version }, {
    capabilities: { tools: {} },
    instructions: 'Sends SMS through smppd and follows them: send_sms, then get_message_status with the id it answers; identify_sms '
      + 'tells how a text would be split and encoded; list_batches lists this client\'s jobs. A refused call is a tool error whose '
      + 'structured content is { status, error, message, errorCode, requestUri }; branch on errorCode.',
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOL_LIST }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const { name } = request.params;
    const tool = Object.hasOwn(TOOLS, name) ? TOOLS[name] : undefined;
    if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `no tool ${JSON.stringify(name)}; tools/list names them`);
    try {
      const answer = await tool.run(ctx, client, request.params.arguments ?? {});
      return { content: [{ type: 'text', text: answer.text }], structuredContent: answer.structured };
    } catch (e) {
      return refusal(e, name, log);
    }
  });
  return server;
}
