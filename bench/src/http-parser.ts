/**
 * An incremental parser of HTTP/1.1 responses (RFC 9112) for the benchmark's sendSms client:
 * bytes in as they come off a socket, split anywhere, one call per complete response out. Pure:
 * no socket, no clock.
 *
 * It reads a body framed by Content-Length, and by Transfer-Encoding: chunked too. The daemon
 * (fastify) answers sendSms with Content-Length, but a chunked answer is valid HTTP, and counting
 * it as a connection error would blame the connection for a framing the client chose not to read.
 * It refuses, and the connection must then be dropped: a body delimited by the close of the
 * connection (neither header: the client could not tell a complete answer from a cut one), a
 * transfer coding other than chunked (none is asked for), 101 Switching Protocols, a malformed
 * line, and a head, a line or a body past its limit.
 */

/** Where the complete responses go. */
export interface HttpResponseSink {
  /**
   * One complete response (interim 1xx responses are skipped). `body` is a view of the bytes fed
   * or of the parser's own copy: read it before returning. `close`: the server closes the
   * connection after this response (Connection: close, or HTTP/1.0 without keep-alive); the
   * parser reads nothing after it. `keepAliveMs`: the server's Keep-Alive timeout hint, ms, or 0.
   */
  onResponse(status: number, body: Buffer, close: boolean, keepAliveMs: number): void;
}

/** Limits, bytes. A response past one is refused (the server is not the daemon, or is broken). */
export interface HttpParserLimits {
  /** Status line and headers. Default 16 KiB (node's own default for a head). */
  maxHeadBytes?: number;
  /** One body. Default 16 MiB: a sendSms answer is some tens of bytes. */
  maxBodyBytes?: number;
}

const State = { head: 0, body: 1, chunkSize: 2, chunkData: 3, chunkEnd: 4, trailers: 5, closed: 6, failed: 7 } as const;
type State = (typeof State)[keyof typeof State];

const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');
const CRLF = Buffer.from('\r\n', 'latin1');
const EMPTY = Buffer.alloc(0);
/** A chunk-size line with its extensions (RFC 9112 §7.1.1); longer is not a size. */
const MAX_CHUNK_LINE = 1024;

export class HttpResponseParser {
  readonly #sink: HttpResponseSink;
  readonly #maxHead: number;
  readonly #maxBody: number;
  #state: State = State.head;
  #error: string | undefined;
  /** The bytes of an unfinished head or line, copied: a chunk is only borrowed. */
  #held: Buffer | undefined;
  // The response being read.
  #status = 0;
  #close = false;
  #keepAliveMs = 0;
  /** Body bytes (Content-Length) or bytes of the current chunk still to come. */
  #remaining = 0;
  /** A Content-Length body that spans chunks, filled to `#filled`. */
  #body: Buffer | undefined;
  #filled = 0;
  /** The pieces of a chunked body (copies), and their total length. */
  #pieces: Buffer[] = [];
  #piecesLength = 0;

  constructor(sink: HttpResponseSink, limits: HttpParserLimits = {}) {
    this.#sink = sink;
    this.#maxHead = limits.maxHeadBytes ?? 16 * 1024;
    this.#maxBody = limits.maxBodyBytes ?? 16 * 1024 * 1024;
  }

  /**
   * Parses the first `length` bytes of `bytes`. They are only borrowed (a socket may read into
   * the same buffer again): what must outlive the call is copied. Returns undefined, or why the
   * stream is not one this parser reads; it then reads nothing more and returns that again.
   */
  feed(bytes: Buffer, length = bytes.length): string | undefined {
    if (this.#state === State.failed) return this.#error;
    let data = bytes;
    let end = length;
    if (this.#held) {
      data = Buffer.concat([this.#held, bytes.subarray(0, length)]);
      end = data.length;
      this.#held = undefined;
    }
    let at = 0;
    while (at < end) {
      switch (this.#state) {
        case State.head: at = this.#readHead(data, at, end); break;
        case State.body: at = this.#readBody(data, at, end); break;
        case State.chunkSize: at = this.#readChunkSize(data, at, end); break;
        case State.chunkData: at = this.#readChunkData(data, at, end); break;
        case State.chunkEnd: at = this.#readChunkEnd(data, at, end); break;
        case State.trailers: at = this.#readTrailer(data, at, end); break;
        case State.closed: return undefined; // the server said it closes: nothing after is a response
        // State.failed: `#fail` returned past the end, and the loop is over.
      }
    }
    return this.#error;
  }

  #readHead(data: Buffer, at: number, end: number): number {
    const headEnd = data.indexOf(HEAD_END, at);
    if (headEnd < 0 || headEnd + 4 > end) return this.#hold(data, at, end, this.#maxHead, 'the head');
    if (headEnd - at > this.#maxHead) return this.#fail(`a head longer than ${this.#maxHead} bytes`);
    const text = data.toString('latin1', at, headEnd);
    const next = headEnd + 4;
    // RFC 9112 §4: HTTP/1.x SP 3DIGIT SP [reason]
    if (!text.startsWith('HTTP/1.') || text.charCodeAt(8) !== 0x20) return this.#fail('not an HTTP/1.x status line');
    const minor = text.charCodeAt(7);
    const status = digit(text, 9) * 100 + digit(text, 10) * 10 + digit(text, 11);
    const after = text.charCodeAt(12);
    if (!(status >= 100 && status <= 999) || (minor !== 0x30 && minor !== 0x31) || !(after === 0x20 || after === 0x0d || Number.isNaN(after))) {
      return this.#fail('not an HTTP/1.x status line');
    }
    let contentLength = -1;
    let chunked = false;
    let hasClose = false;
    let hasKeepAlive = false;
    let keepAliveMs = 0;
    const statusLineEnd = text.indexOf('\r\n');
    let pos = statusLineEnd < 0 ? text.length : statusLineEnd + 2;
    while (pos < text.length) {
      let eol = text.indexOf('\r\n', pos);
      if (eol < 0) eol = text.length;
      const colon = text.indexOf(':', pos);
      if (colon <= pos || colon > eol) return this.#fail('a header line without a name');
      const nameLength = colon - pos;
      // Only four names matter here: the others are not even sliced.
      if (nameLength === 10 || nameLength === 14 || nameLength === 17) {
        const name = text.slice(pos, colon).toLowerCase();
        const value = text.slice(colon + 1, eol).trim();
        if (name === 'content-length') {
          // RFC 9110 §8.6: a repeated Content-Length must repeat the same number.
          const n = /^\d{1,15}$/.test(value) ? Number(value) : -1;
          if (n < 0 || (contentLength >= 0 && n !== contentLength)) return this.#fail('an invalid Content-Length');
          contentLength = n;
        } else if (name === 'transfer-encoding') {
          if (chunked || value.toLowerCase() !== 'chunked') return this.#fail(`a transfer coding other than chunked (${value})`);
          chunked = true;
        } else if (name === 'connection') {
          for (const token of value.toLowerCase().split(',')) {
            const t = token.trim();
            if (t === 'close') hasClose = true;
            else if (t === 'keep-alive') hasKeepAlive = true;
          }
        } else if (name === 'keep-alive') {
          const m = /(?:^|[,\s])timeout\s*=\s*(\d{1,9})/i.exec(value);
          if (m) keepAliveMs = Number(m[1]) * 1000;
        }
      }
      pos = eol + 2;
    }
    if (status < 200) {
      // RFC 9110 §15.2: an interim response has no body and is followed by the final one.
      if (status === 101) return this.#fail('101 Switching Protocols (no upgrade was asked for)');
      return next;
    }
    this.#status = status;
    // RFC 9112 §9.3: HTTP/1.1 keeps the connection unless told otherwise; HTTP/1.0 the reverse.
    this.#close = hasClose || (minor === 0x30 && !hasKeepAlive);
    this.#keepAliveMs = keepAliveMs;
    if (status === 204 || status === 304) return this.#complete(EMPTY, next);
    // RFC 9112 §6.3: Transfer-Encoding overrides Content-Length.
    if (chunked) {
      this.#state = State.chunkSize;
      return next;
    }
    if (contentLength < 0) return this.#fail('a response without Content-Length (its end would be the close of the connection)');
    if (contentLength > this.#maxBody) return this.#fail(`a body longer than ${this.#maxBody} bytes`);
    if (contentLength === 0) return this.#complete(EMPTY, next);
    this.#remaining = contentLength;
    this.#state = State.body;
    return next;
  }

  #readBody(data: Buffer, at: number, end: number): number {
    const available = end - at;
    // Most often the whole body is here: a view of it, no copy.
    if (this.#body === undefined && available >= this.#remaining) {
      const bodyEnd = at + this.#remaining;
      return this.#complete(data.subarray(at, bodyEnd), bodyEnd);
    }
    this.#body ??= Buffer.allocUnsafe(this.#remaining);
    const n = Math.min(available, this.#remaining);
    data.copy(this.#body, this.#filled, at, at + n);
    this.#filled += n;
    this.#remaining -= n;
    if (this.#remaining > 0) return at + n;
    const body = this.#body;
    this.#body = undefined;
    this.#filled = 0;
    return this.#complete(body, at + n);
  }

  #readChunkSize(data: Buffer, at: number, end: number): number {
    const eol = data.indexOf(CRLF, at);
    if (eol < 0 || eol + 2 > end) return this.#hold(data, at, end, MAX_CHUNK_LINE, 'a chunk-size line');
    if (eol - at > MAX_CHUNK_LINE) return this.#fail('a chunk-size line too long');
    // chunk-size [ BWS ";" extension ], extensions ignored
    const line = data.toString('latin1', at, eol);
    const semicolon = line.indexOf(';');
    const hex = (semicolon < 0 ? line : line.slice(0, semicolon)).trim();
    if (!/^[0-9a-fA-F]{1,12}$/.test(hex)) return this.#fail('an invalid chunk size');
    const size = parseInt(hex, 16);
    if (size === 0) {
      this.#state = State.trailers;
    } else {
      if (this.#piecesLength + size > this.#maxBody) return this.#fail(`a body longer than ${this.#maxBody} bytes`);
      this.#remaining = size;
      this.#state = State.chunkData;
    }
    return eol + 2;
  }

  #readChunkData(data: Buffer, at: number, end: number): number {
    const n = Math.min(end - at, this.#remaining);
    this.#pieces.push(Buffer.from(data.subarray(at, at + n)));
    this.#piecesLength += n;
    this.#remaining -= n;
    if (this.#remaining === 0) this.#state = State.chunkEnd;
    return at + n;
  }

  #readChunkEnd(data: Buffer, at: number, end: number): number {
    if (end - at < 2) return this.#hold(data, at, end, 2, 'the end of a chunk');
    if (data[at] !== 0x0d || data[at + 1] !== 0x0a) return this.#fail('a chunk not followed by CRLF');
    this.#state = State.chunkSize;
    return at + 2;
  }

  /** The trailer section (RFC 9112 §7.1.2): read and ignored, up to its empty line. */
  #readTrailer(data: Buffer, at: number, end: number): number {
    const eol = data.indexOf(CRLF, at);
    if (eol < 0 || eol + 2 > end) return this.#hold(data, at, end, this.#maxHead, 'a trailer line');
    if (eol > at) return eol + 2;
    const body = this.#pieces.length === 1 ? this.#pieces[0]! : Buffer.concat(this.#pieces, this.#piecesLength);
    this.#pieces = [];
    this.#piecesLength = 0;
    return this.#complete(body, eol + 2);
  }

  #complete(body: Buffer, next: number): number {
    this.#state = this.#close ? State.closed : State.head;
    this.#sink.onResponse(this.#status, body, this.#close, this.#keepAliveMs);
    return next;
  }

  /** Keeps the unfinished rest (`what`) for the next feed, unless it is already past `limit`. */
  #hold(data: Buffer, at: number, end: number, limit: number, what: string): number {
    if (end - at > limit) return this.#fail(`${what} longer than ${limit} bytes`);
    this.#held = Buffer.from(data.subarray(at, end));
    return end;
  }

  #fail(reason: string): number {
    this.#state = State.failed;
    this.#error = reason;
    this.#held = undefined;
    return Number.MAX_SAFE_INTEGER;
  }
}

/** The digit at `i`, or NaN. */
function digit(text: string, i: number): number {
  const c = text.charCodeAt(i) - 0x30;
  return c >= 0 && c <= 9 ? c : NaN;
}
