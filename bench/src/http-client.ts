/**
 * The sendSms load's HTTP/1.1 client: a fixed number of keep-alive connections over node:net,
 * one request in flight on each (real clients do not pipeline), requests written as given (one
 * prepared Buffer each). It exists because the generator shares the machine with the daemon it
 * measures, and every µs it spends is taken from the daemon: a general-purpose client (undici's
 * Pool) spends several times the CPU per request that this one does, most of which goes to the
 * write and read system calls. Here a request costs a socket write, and an answer a read into one buffer shared by all the connections (net's
 * `onread`: no stream, no Buffer per read) and the parse of its head.
 *
 * A connection that fails or closes is opened again when it is next used: a request on it then
 * is written as it connects. A request that was on it gets no answer and is reported failed,
 * never sent again (it is a POST).
 */
import { connect, type Socket } from 'node:net';
import { HttpResponseParser, type HttpResponseSink } from './http-parser.js';

/** What becomes of the requests given to `KeepAlivePool.send`. */
export interface RequestOutcomes {
  /** A complete answer. `body` is borrowed: read it before returning. */
  answered(issuedAt: number, counted: boolean, status: number, body: Buffer): void;
  /** No answer: the connection failed or closed with the request on it. */
  failed(issuedAt: number, counted: boolean): void;
}

/**
 * A server's Keep-Alive timeout hint less this, ms, is how long a connection is used after its
 * last answer: past it, the server may be closing it just as a request is written.
 */
const KEEP_ALIVE_MARGIN_MS = 1000;
/** What one read takes at most, bytes. An answer here is a few hundred. */
const READ_BUFFER_BYTES = 64 * 1024;

/**
 * `size` connections to one server and a queue. Its connections use `host`, `port`, `readBuffer`,
 * `outcomes`, `destroyed` and `idle`; the caller, `open`, `send` and `destroy`.
 */
export class KeepAlivePool {
  readonly #connections: PooledConnection[] = [];
  /** The connections with no request on them; the last one answered is used first. */
  readonly #idle: PooledConnection[] = [];
  /**
   * Requests given while every connection was busy, in order (only when the caller allows more
   * pending requests than there are connections): three queues, no object per request.
   */
  #queued: Buffer[] = [];
  #queuedAt: number[] = [];
  #queuedCounted: boolean[] = [];
  #queueHead = 0;
  #destroyed = false;
  readonly outcomes: RequestOutcomes;
  /** Where each connection reads: one at a time, and a read is parsed before the next. */
  readonly readBuffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);

  /** `size` connections to `host`:`port`, not yet opened. */
  constructor(readonly host: string, readonly port: number, size: number, outcomes: RequestOutcomes) {
    this.outcomes = outcomes;
    for (let i = 0; i < size; i++) this.#connections.push(new PooledConnection(this));
  }

  get destroyed(): boolean {
    return this.#destroyed;
  }

  /**
   * Connects every connection and sends `greeting` (a request whose answer is read and dropped)
   * on each, so that all are open and used once before the load starts. Resolves when every one
   * is answered or has failed; a failed one is opened again when used.
   */
  open(greeting: Buffer): Promise<void> {
    return Promise.all(this.#connections.map((c) => c.greet(greeting))).then(() => undefined);
  }

  /**
   * Writes `request` on an idle connection, or queues it until one is. `issuedAt` (performance.now()
   * ms) and `counted` come back with its outcome.
   */
  send(request: Buffer, issuedAt: number, counted: boolean): void {
    const connection = this.#idle.pop();
    if (connection) {
      connection.send(request, issuedAt, counted);
      return;
    }
    this.#queued.push(request);
    this.#queuedAt.push(issuedAt);
    this.#queuedCounted.push(counted);
  }

  /** `connection` has no request on it: it takes the oldest queued one, or waits for one. */
  idle(connection: PooledConnection): void {
    if (this.#destroyed) return;
    const i = this.#queueHead;
    if (i === this.#queued.length) {
      this.#idle.push(connection);
      return;
    }
    const request = this.#queued[i]!;
    const issuedAt = this.#queuedAt[i]!;
    const counted = this.#queuedCounted[i]!;
    if (++this.#queueHead === this.#queued.length) {
      this.#queued = [];
      this.#queuedAt = [];
      this.#queuedCounted = [];
      this.#queueHead = 0;
    }
    connection.send(request, issuedAt, counted);
  }

  /** Closes every connection; what is on them or queued is dropped without an outcome. */
  destroy(): void {
    this.#destroyed = true;
    for (const c of this.#connections) c.close();
    this.#idle.length = 0;
  }
}

/** One keep-alive connection of the pool, and the request on it. */
class PooledConnection implements HttpResponseSink {
  readonly #pool: KeepAlivePool;
  /** Undefined while closed: opened again when next used. */
  #socket: Socket | undefined;
  #busy = false;
  #issuedAt = 0;
  #counted = false;
  /** While the greeting of `open` is on this connection: what to call when it ends. */
  #greeted: (() => void) | undefined;
  /** performance.now() ms from which this connection, idle, is not used again (Keep-Alive hint). */
  #usableUntil = Infinity;
  /** An answer came with no request on the connection: the stream is not to be trusted. */
  #unsolicited = false;

  constructor(pool: KeepAlivePool) {
    this.#pool = pool;
  }

  greet(greeting: Buffer): Promise<void> {
    return new Promise((resolve) => {
      this.#greeted = () => {
        this.#pool.idle(this);
        resolve();
      };
      this.send(greeting, 0, false);
    });
  }

  send(request: Buffer, issuedAt: number, counted: boolean): void {
    if (this.#socket === undefined || issuedAt >= this.#usableUntil) this.#connect();
    this.#busy = true;
    this.#issuedAt = issuedAt;
    this.#counted = counted;
    // One small request per connection at a time: nothing to gain from write's backpressure.
    this.#socket!.write(request);
  }

  close(): void {
    this.#busy = false;
    this.#greeted = undefined;
    this.#drop();
  }

  onResponse(status: number, body: Buffer, close: boolean, keepAliveMs: number): void {
    if (!this.#busy) {
      this.#unsolicited = true;
      return;
    }
    this.#busy = false;
    if (close) this.#drop();
    else if (keepAliveMs > 0) this.#usableUntil = performance.now() + keepAliveMs - KEEP_ALIVE_MARGIN_MS;
    this.#settle(status, body);
  }

  /** The request on this connection is over (`body` undefined: failed); the next may come. */
  #settle(status: number, body: Buffer | undefined): void {
    const greeted = this.#greeted;
    if (greeted) {
      this.#greeted = undefined;
      greeted();
      return;
    }
    const issuedAt = this.#issuedAt;
    const counted = this.#counted;
    // Idle first, so that the caller may send again from its outcome handler.
    this.#pool.idle(this);
    if (body) this.#pool.outcomes.answered(issuedAt, counted, status, body);
    else this.#pool.outcomes.failed(issuedAt, counted);
  }

  #connect(): void {
    this.#drop();
    const parser = new HttpResponseParser(this);
    const socket: Socket = connect({
      host: this.#pool.host, port: this.#pool.port, noDelay: true,
      onread: { buffer: this.#pool.readBuffer, callback: (nread: number): boolean => this.#read(socket, parser, nread) },
    });
    // Errors end in 'close', where they are handled. The server's FIN is handled at once: a
    // request written after it, before 'close', would be lost.
    socket.on('error', ignore);
    socket.on('end', () => this.#closed(socket));
    socket.on('close', () => this.#closed(socket));
    this.#socket = socket;
    this.#usableUntil = Infinity;
  }

  /** A read into the pool's buffer; true: go on reading. */
  #read(socket: Socket, parser: HttpResponseParser, nread: number): boolean {
    if (socket !== this.#socket) return true;
    const error = parser.feed(this.#pool.readBuffer, nread);
    if ((error !== undefined || this.#unsolicited) && socket === this.#socket) this.#fail();
    return true;
  }

  #closed(socket: Socket): void {
    if (socket === this.#socket) this.#fail();
  }

  /** The connection is lost: the request on it, if any, failed. */
  #fail(): void {
    this.#drop();
    if (!this.#busy || this.#pool.destroyed) return;
    this.#busy = false;
    this.#settle(0, undefined);
  }

  /** Closes the socket, if open, and forgets it: its events are no longer this connection's. */
  #drop(): void {
    const socket = this.#socket;
    this.#socket = undefined;
    this.#unsolicited = false;
    socket?.destroy();
  }
}

function ignore(): void {}
