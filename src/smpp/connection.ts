import net from 'node:net';
import tls from 'node:tls';
import type { Clock } from '../core/clock.js';
import { ErrorCode, SmppdError } from '../core/errors.js';
import { FrameReader } from './frame.js';
import type { Pdu } from './pdu.js';
import { decodePdu, encodePdu } from './wire.js';

/** TLS for one upstream (node:tls). Certificate checks are on unless turned off explicitly. */
export interface TlsSettings {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  servername?: string;
  /** Default true. False accepts any certificate: for lab use only. */
  rejectUnauthorized: boolean;
}

export interface ConnectSettings {
  host: string;
  port: number;
  tls: TlsSettings | false;
  /** Milliseconds to wait for TCP (and TLS) to be established. */
  connectTimeoutMs: number;
}

export interface ConnectionHandlers {
  /** A whole, decoded PDU. */
  pdu(pdu: Pdu): void;
  /** A PDU whose header was readable but whose body was not: answer generic_nack. */
  badBody(commandId: number, sequenceNumber: number, reason: string, nackStatus: number): void;
  /** The socket can take more after `write` said it was full. */
  drain(): void;
  /** Called once, whatever closed it. */
  closed(reason: string): void;
}

/**
 * One TCP or TLS socket carrying SMPP: frames and decodes what arrives, encodes and writes
 * what is sent. Writes made in the same tick are corked into one syscall (and one TLS record);
 * `writable` reports the socket's backpressure so the session stops pulling work when the
 * kernel buffer is full instead of piling it up in memory. A bad command_length cannot be
 * resynchronised, so it resets the link.
 */
export class Connection {
  #reader = new FrameReader();
  #lastReceivedAt: number;
  #closed = false;
  #corked = false;

  private constructor(
    private readonly socket: net.Socket,
    private readonly clock: Clock,
    private readonly handlers: ConnectionHandlers,
  ) {
    this.#lastReceivedAt = clock.now();
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('drain', () => handlers.drain());
    socket.on('error', (e) => this.close(`socket error: ${e.message}`));
    socket.on('close', () => this.close('connection closed by peer'));
    socket.on('end', () => this.close('connection ended by peer'));
  }

  /** Opens a connection; rejects with CONNECTION_CLOSED on error or timeout. */
  static open(settings: ConnectSettings, clock: Clock, handlers: ConnectionHandlers): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const readyEvent = settings.tls ? 'secureConnect' : 'connect';
      const socket = settings.tls
        ? tls.connect({
            host: settings.host,
            port: settings.port,
            ca: settings.tls.ca,
            cert: settings.tls.cert,
            key: settings.tls.key,
            servername: settings.tls.servername ?? (net.isIP(settings.host) ? undefined : settings.host),
            rejectUnauthorized: settings.tls.rejectUnauthorized,
          })
        : net.connect({ host: settings.host, port: settings.port });
      const fail = (message: string): void => {
        timer.cancel();
        socket.destroy();
        reject(new SmppdError(ErrorCode.CONNECTION_CLOSED, message, { host: settings.host, port: settings.port }));
      };
      const timer = clock.setTimer(settings.connectTimeoutMs, () => fail(`connect timeout after ${settings.connectTimeoutMs} ms`));
      socket.once('error', (e: Error) => fail(e.message));
      socket.once(readyEvent, () => {
        timer.cancel();
        socket.removeAllListeners('error');
        resolve(new Connection(socket, clock, handlers));
      });
    });
  }

  get isOpen(): boolean {
    return !this.#closed;
  }

  /** False while the socket's buffer is over its high-water mark. */
  get writable(): boolean {
    return !this.#closed && !this.socket.writableNeedDrain;
  }

  lastReceivedAt(): number {
    return this.#lastReceivedAt;
  }

  /** Encodes and writes `pdu`. Returns `writable` afterwards. Throws PDU_MALFORMED if unencodable. */
  send(pdu: Pdu): boolean {
    return this.sendBytes(encodePdu(pdu));
  }

  sendBytes(bytes: Buffer): boolean {
    if (this.#closed) return false;
    if (!this.#corked) {
      this.#corked = true;
      this.socket.cork();
      process.nextTick(() => {
        this.#corked = false;
        this.socket.uncork();
      });
    }
    this.socket.write(bytes);
    return this.writable;
  }

  /** Closes the socket once; later calls do nothing. */
  close(reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.socket.destroy();
    this.handlers.closed(reason);
  }

  /** Ends the socket after what has been written is flushed (after unbind_resp). */
  end(reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.socket.end();
    this.handlers.closed(reason);
  }

  #onData(chunk: Buffer): void {
    if (this.#closed) return;
    this.#lastReceivedAt = this.clock.now();
    let frames: Buffer[];
    try {
      frames = this.#reader.push(chunk);
    } catch (e) {
      this.close(`malformed stream, link reset: ${(e as Error).message}`);
      return;
    }
    try {
      for (const frame of frames) {
        if (this.#closed) return;
        const decoded = decodePdu(frame);
        if (decoded.ok) this.handlers.pdu(decoded.pdu);
        else this.handlers.badBody(decoded.commandId, decoded.sequenceNumber, decoded.reason, decoded.nackStatus);
      }
    } catch (e) {
      // A handler bug must cost one link, never the process.
      this.close(`internal error while handling a PDU, link reset: ${(e as Error).message}`);
    }
  }
}
