/**
 * The MCP server at /mcp (config `mcp.enabled`): the Streamable HTTP transport of the Model
 * Context Protocol (2025-11-25, "Transports"), for AI agents, with the tools of mcp-tools.ts.
 *
 * Stateless, as the SDK's stateless server does it: every POST gets a server and a transport of
 * its own, for the client its bearer token names, closed when it is answered. No session id is
 * given, so there is no session to keep, expire, or take over from another client. Answers are
 * JSON, not an SSE stream: a tool call is one request and one answer. GET (the SSE stream for
 * server-sent messages) and DELETE (ending a session) are 405 with `Allow: POST`, as the
 * transport specification lets a server without either answer.
 *
 * The token is checked before the body is read, as on /sms: a missing or unknown one is 401 with
 * the five-field body (errorCode UNAUTHORIZED) and `WWW-Authenticate: Bearer`. The body is read
 * by the server's JSON parser, within http.maxBodyBytes.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { ApiClient } from '../../api/auth.js';
import { ApiError } from '../../api/errors.js';
import type { RouteContext } from './context.js';
import { sendError } from './error-replies.js';
import { MCP_PATH, mcpServerFor } from './mcp-tools.js';

/** Where the hook leaves the client on the request. */
const CLIENT = Symbol('smppd.mcpClient');

/** The request headers the transport reads; the others (the token first) are not handed to it. */
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'] as const;

export function registerMcpRoutes(app: FastifyInstance, ctx: RouteContext, settings: { version: string }): void {
  const log = ctx.deps.log.child({ component: 'mcp' });

  const authenticate = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const client = ctx.auth.identify(request.headers.authorization);
    if (typeof client === 'string') {
      sendError(reply, request, new ApiError('UNAUTHORIZED', client, { 'www-authenticate': 'Bearer' }));
      return;
    }
    request.setDecorator(CLIENT, client);
    done();
  };

  void app.register(async (scope) => {
    scope.decorateRequest(CLIENT, null);
    scope.addHook('onRequest', authenticate);

    scope.post(MCP_PATH, async (request, reply) => {
      const client = request.getDecorator<ApiClient>(CLIENT);
      const server = mcpServerFor(ctx, client, settings.version, log);
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await server.connect(transport);
      try {
        // parsedBody: the body the JSON parser read; none (an empty body) is the transport's parse error.
        const response = await transport.handleRequest(webRequest(request), request.body === undefined ? {} : { parsedBody: request.body });
        reply.code(response.status);
        response.headers.forEach((value, name) => { reply.header(name, value); });
        const text = await response.text();
        return reply.send(text === '' ? undefined : text);
      } finally {
        // Closes the transport too; nothing of this request's is kept.
        await server.close();
      }
    });

    const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) => reply.code(405).header('allow', 'POST')
      .type('application/json; charset=utf-8')
      .send({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP server is stateless (no SSE stream, no session); POST JSON-RPC messages to /mcp' }, id: null });
    scope.get(MCP_PATH, notAllowed);
    scope.delete(MCP_PATH, notAllowed);
  });
}

/** The request as the web-standard transport reads it: its headers that matter, not its body (passed parsed). */
function webRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const name of TRANSPORT_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  // The URL reaches the tools only as request info, which they do not read: the Host header is not trusted for it.
  return new Request(`http://localhost${MCP_PATH}`, { method: request.method, headers });
}
