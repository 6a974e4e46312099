/**
 * A real webhook receiver for tests: HTTP (or HTTPS) on 127.0.0.1, a free port, every request
 * recorded as it arrived, and a behaviour that decides each reply (a status, no answer at all,
 * or a reset socket). It also counts what a client's pool did to it: TCP connections opened and
 * requests in flight.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';

export interface ReceivedRequest {
  body: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
  headers: Record<string, string | string[] | undefined>;
  /** Date.now() when the whole body had arrived. */
  at: number;
  /** The request target: path and query. */
  path: string;
}

export type ReceiverReply =
  | { status: number; headers?: Record<string, string>; body?: string }
  /** Never answers (until stop or close). */
  | { hang: true }
  /** Resets the socket. */
  | { destroy: true };

export type ReceiverBehaviour = (req: ReceivedRequest, index: number) => ReceiverReply | Promise<ReceiverReply>;

export interface WebhookReceiver {
  /** http(s)://127.0.0.1:<port>/hook (or the `host` of the options) */
  url: string;
  port: number;
  /** Every request, in arrival order, whatever was answered. */
  received: ReceivedRequest[];
  /** Only those answered 2xx. */
  accepted: ReceivedRequest[];
  /** TCP connections accepted so far (over restarts). */
  readonly connections: number;
  /** Requests received and not yet answered (hanging ones included). */
  readonly inFlight: number;
  /** The most requests ever in flight at once. */
  readonly maxInFlight: number;
  /** Decides each reply; default: 200. Set at any time. */
  setBehaviour(decide: ReceiverBehaviour): void;
  /** Resolves when `accepted.length >= n` (rejects after `timeoutMs`, default 10 s, with a message listing counts). */
  waitForAccepted(n: number, timeoutMs?: number): Promise<void>;
  /** Resolves when `received.length >= n` (rejects after `timeoutMs`, default 10 s). */
  waitForReceived(n: number, timeoutMs?: number): Promise<void>;
  /** Stops listening and destroys open sockets; a later `restart()` listens again on the same port. */
  stop(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface WebhookReceiverOptions {
  /** Serve HTTPS with this key and certificate. */
  tls?: { key: Buffer; cert: Buffer };
  /** The loopback address to listen on; default 127.0.0.1 (another one, such as 127.0.0.2, exists on Linux only). */
  host?: string;
}

export async function startWebhookReceiver(options: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
  const host = options.host ?? '127.0.0.1';
  const received: ReceivedRequest[] = [];
  const accepted: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  const waiters = new Set<() => void>();
  let behaviour: ReceiverBehaviour = () => ({ status: 200 });
  let connections = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let listening = false;
  let closed = false;

  const notify = (): void => {
    for (const check of [...waiters]) check();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let answered = false;
    const done = (): void => {
      if (answered) return;
      answered = true;
      inFlight -= 1;
    };
    res.on('close', done);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const request: ReceivedRequest = { body, json: parseJson(body), headers: { ...req.headers }, at: Date.now(), path: req.url ?? '' };
    const index = received.push(request) - 1;
    notify();
    let reply: ReceiverReply;
    try {
      reply = await behaviour(request, index);
    } catch {
      reply = { status: 500 };
    }
    if ('hang' in reply) return;
    if ('destroy' in reply) {
      req.socket.resetAndDestroy();
      return;
    }
    const text = reply.body ?? JSON.stringify({ received: index });
    res.writeHead(reply.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...reply.headers });
    res.end(text, () => {
      done();
      if (reply.status >= 200 && reply.status < 300) {
        accepted.push(request);
        notify();
      }
    });
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch(() => req.socket.destroy());
  };
  const server: Server = options.tls ? createHttpsServer({ key: options.tls.key, cert: options.tls.cert }, onRequest) : createHttpServer(onRequest);
  server.on('connection', (socket: Socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  const listen = (port: number): Promise<void> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        listening = true;
        resolve();
      });
    });

  const stop = async (): Promise<void> => {
    if (!listening) return;
    listening = false;
    const closing = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    await closing;
  };

  const waitFor = (what: string, reached: () => boolean, timeoutMs: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (!reached()) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`webhook receiver: waited ${timeoutMs} ms for ${what}; received ${received.length}, accepted ${accepted.length}, in flight ${inFlight}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });

  await listen(0);
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${options.tls ? 'https' : 'http'}://${host}:${port}/hook`,
    port,
    received,
    accepted,
    get connections() {
      return connections;
    },
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    setBehaviour(decide) {
      behaviour = decide;
    },
    waitForAccepted(n, timeoutMs = 10_000) {
      return waitFor(`${n} accepted`, () => accepted.length >= n, timeoutMs);
    },
    waitForReceived(n, timeoutMs = 10_000) {
      return waitFor(`${n} received`, () => received.length >= n, timeoutMs);
    },
    stop,
    async restart() {
      if (closed) throw new Error('webhook receiver: restart after close');
      if (!listening) await listen(port);
    },
    async close() {
      closed = true;
      await stop();
    },
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
