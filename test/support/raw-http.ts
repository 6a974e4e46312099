/**
 * HTTP/1.1 over a bare socket (node:net or node:tls): for what a client library will not send
 * (a malformed request line, a missing Host, a body that stops) and for reading exactly what
 * the server wrote back before it closed the connection.
 */
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';

/** One response as read off the socket. */
export interface RawResponse {
  /** `HTTP/1.1 408 Request Timeout`. */
  statusLine: string;
  status: number;
  /** Names in lower case. */
  headers: Record<string, string>;
  body: string;
}

/** A connection whose bytes are kept, and which says when the server closed it. */
export class RawConnection {
  readonly socket: Socket;
  #received = '';
  readonly connected: Promise<void>;
  /** Resolves when the connection is closed, by either side; with the error, if one ended it. */
  readonly closed: Promise<Error | undefined>;
  isClosed = false;

  /** `from`: the local address to connect from (127.0.0.2 is loopback too, on Linux); default the system's choice. */
  constructor(port: number, tls?: ConnectionOptions, from?: string) {
    const local = from === undefined ? {} : { localAddress: from };
    this.socket = tls ? tlsConnect({ host: '127.0.0.1', port, servername: 'localhost', ...local, ...tls }) : netConnect({ host: '127.0.0.1', port, ...local });
    this.socket.setEncoding('latin1');
    this.socket.on('data', (chunk: string) => { this.#received += chunk; });
    this.connected = new Promise((resolve, reject) => {
      this.socket.once(tls ? 'secureConnect' : 'connect', () => resolve());
      this.socket.once('error', reject);
    });
    let failure: Error | undefined;
    this.socket.on('error', (e) => { failure = e; });
    this.closed = new Promise((resolve) => this.socket.once('close', () => { this.isClosed = true; resolve(failure); }));
    // The promise above may be rejected before anyone awaits it.
    this.connected.catch(() => {});
  }

  /** Everything the server has written so far, as latin1 text. */
  get received(): string {
    return this.#received;
  }

  write(bytes: string | Buffer): void {
    if (!this.socket.destroyed) this.socket.write(bytes);
  }

  /** The first response the server wrote, once it is whole. */
  async response(timeoutMs = 15_000): Promise<RawResponse> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = parseResponse(this.#received);
      if (parsed) return parsed;
      if (this.isClosed || Date.now() > deadline) {
        throw new Error(`no whole response (${this.isClosed ? 'closed' : 'timed out'}); received ${JSON.stringify(this.#received.slice(0, 300))}`);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** The first whole response in `text` (its body by Content-Length), or undefined. */
export function parseResponse(text: string): RawResponse | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  const body = Buffer.from(text.slice(end + 4), 'latin1');
  if (body.length < length) return undefined;
  return { statusLine, status: Number(statusLine.split(' ')[1]), headers, body: body.subarray(0, length).toString('utf8') };
}

/** Sends `bytes` on a new connection and reads the response the server answers with. */
export async function exchange(port: number, bytes: string | Buffer, tls?: ConnectionOptions): Promise<RawResponse & { connection: RawConnection }> {
  const c = new RawConnection(port, tls);
  await c.connected;
  c.write(bytes);
  try {
    return { ...(await c.response()), connection: c };
  } catch (e) {
    c.destroy();
    throw e;
  }
}
