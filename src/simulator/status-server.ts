import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isSmppdError } from '../core/errors.js';
import { parseBehaviourPatch, type BehaviourPatch, type SimulatorBehaviour } from './behaviour.js';
import type { SimulatorCounters } from './counters.js';

/** What the status endpoint controls: the simulator's public surface, nothing more. */
export interface StatusControl {
  counters(): SimulatorCounters;
  behaviour(): SimulatorBehaviour;
  setBehaviour(patch: BehaviourPatch): void;
  dropConnections(): number;
  resetCounters(): void;
}

const MAX_BODY_BYTES = 64 * 1024;

/**
 * A small HTTP endpoint for demos and the benchmark:
 * GET /status → counters; GET /behaviour → behaviour; POST /behaviour (JSON patch) → setBehaviour;
 * POST /drop → dropConnections; POST /reset → resetCounters.
 */
export class StatusServer {
  #server: Server | undefined;

  constructor(private readonly control: StatusControl) {}

  async start(port: number, host: string): Promise<{ port: number }> {
    const server = createServer((req, res) => {
      this.#handle(req, res).catch((e: unknown) => reply(res, 500, { error: (e as Error).message }));
    });
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return { port: (server.address() as AddressInfo).port };
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const route = `${req.method ?? 'GET'} ${path}`;
    switch (route) {
      case 'GET /status':
        return reply(res, 200, this.control.counters());
      case 'GET /behaviour':
        return reply(res, 200, this.control.behaviour());
      case 'POST /behaviour': {
        let patch: BehaviourPatch;
        try {
          patch = parseBehaviourPatch(JSON.parse(await readBody(req)) as unknown);
        } catch (e) {
          return reply(res, 400, { error: isSmppdError(e) || e instanceof SyntaxError ? e.message : 'bad request' });
        }
        this.control.setBehaviour(patch);
        return reply(res, 200, this.control.behaviour());
      }
      case 'POST /drop':
        return reply(res, 200, { dropped: this.control.dropConnections() });
      case 'POST /reset':
        this.control.resetCounters();
        return reply(res, 200, { reset: true });
      default:
        return reply(res, 404, { error: `no route ${route}` });
    }
  }
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > MAX_BODY_BYTES) throw new SyntaxError(`body larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString('utf8');
}
