/**
 * The sendSms client's response parser: the same bytes, split at every offset (and fed a byte at
 * a time), give the same responses; a chunk is only borrowed, as a socket reading into one buffer
 * lends it; what it does not read is refused with a reason.
 */
import { describe, expect, it } from 'vitest';
import { HttpResponseParser, type HttpParserLimits } from '../src/http-parser.js';

interface Seen {
  status: number;
  body: string;
  close: boolean;
  keepAliveMs: number;
}

/** A parser whose responses are collected (bodies copied out, as the sink must). */
function parser(limits?: HttpParserLimits): { p: HttpResponseParser; seen: Seen[] } {
  const seen: Seen[] = [];
  const p = new HttpResponseParser({
    onResponse: (status, body, close, keepAliveMs) => seen.push({ status, body: body.toString('latin1'), close, keepAliveMs }),
  }, limits);
  return { p, seen };
}

/** What a socket's `onread` does: the same buffer each time, stale bytes after `length`, overwritten after the call. */
class LendingSocket {
  readonly #scratch = Buffer.alloc(4096);
  readonly errors: (string | undefined)[] = [];

  constructor(private readonly p: HttpResponseParser) {}

  deliver(piece: Buffer): void {
    // Stale bytes that look like a whole response: a parser reading past `length` would see it.
    this.#scratch.fill('\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n', 'latin1');
    piece.copy(this.#scratch);
    this.errors.push(this.p.feed(this.#scratch, piece.length));
    this.#scratch.fill(0xee);
  }
}

/** Status line, headers and body, CRLF line ends. */
function response(head: string[], body = ''): string {
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}

const ID = 'a3c1f4e2-8b7d-4c6a-9e5f-1d2b3c4d5e6f'; // 36 characters, as the daemon's message ids

const STREAM = Buffer.from([
  response(['HTTP/1.1 100 Continue']),
  response(['HTTP/1.1 200 OK', 'content-type: text/plain; charset=utf-8', 'Content-Length: 36', 'Date: Mon, 01 Jan 2024 00:00:00 GMT', 'Connection: keep-alive', 'Keep-Alive: timeout=72'], ID),
  response(['HTTP/1.1 429 Too Many Requests', 'content-length: 23', 'content-length: 23'], '{"error":"QUEUE_FULL"}\n'),
  response(['HTTP/1.1 200 OK', 'Transfer-Encoding: chunked', 'Content-Length: 999'], '5;name=value\r\nhello\r\n7\r\n, world\r\nA \r\n0123456789\r\n0\r\nx-trailer: 1\r\nx-other: 2\r\n\r\n'),
  response(['HTTP/1.1 200 OK', 'transfer-encoding: chunked'], '0\r\n\r\n'),
  response(['HTTP/1.1 204 No Content', 'X-Empty: '], ''),
  response(['HTTP/1.1 304 Not Modified']),
  response(['HTTP/1.1 202 Accepted', 'content-length: 0']),
  response(['HTTP/1.0 200 OK', 'Connection: keep-alive', 'Keep-Alive: max=100, timeout=5', 'content-length: 2'], 'ok'),
  response(['HTTP/1.1 503 Service Unavailable', 'Content-Length: 5', 'Connection: Keep-Alive, Close'], 'busy.'),
  // After a close: not a response of this connection, never reported.
  response(['HTTP/1.1 200 OK', 'Content-Length: 3'], 'bad'),
].join(''), 'latin1');

const EXPECTED: Seen[] = [
  { status: 200, body: ID, close: false, keepAliveMs: 72_000 },
  { status: 429, body: '{"error":"QUEUE_FULL"}\n', close: false, keepAliveMs: 0 },
  { status: 200, body: 'hello, world0123456789', close: false, keepAliveMs: 0 },
  { status: 200, body: '', close: false, keepAliveMs: 0 },
  { status: 204, body: '', close: false, keepAliveMs: 0 },
  { status: 304, body: '', close: false, keepAliveMs: 0 },
  { status: 202, body: '', close: false, keepAliveMs: 0 },
  { status: 200, body: 'ok', close: false, keepAliveMs: 5_000 },
  { status: 503, body: 'busy.', close: true, keepAliveMs: 0 },
];

describe('HttpResponseParser', () => {
  it('reads Content-Length and chunked bodies, skips 1xx, honours Connection: close and reads nothing after it', () => {
    const { p, seen } = parser();
    expect(p.feed(STREAM)).toBeUndefined();
    expect(seen).toEqual(EXPECTED);
  });

  it('gives the same responses for the stream split at every offset', () => {
    for (let i = 0; i <= STREAM.length; i++) {
      const { p, seen } = parser();
      const socket = new LendingSocket(p);
      socket.deliver(STREAM.subarray(0, i));
      socket.deliver(STREAM.subarray(i));
      expect(socket.errors, `split at ${i}`).toEqual([undefined, undefined]);
      expect(seen, `split at ${i}`).toEqual(EXPECTED);
    }
  });

  it('gives the same responses for the stream split at every pair of offsets', () => {
    // The end of the first response's head, its body and the chunked response: where splits matter most.
    const end = STREAM.indexOf('HTTP/1.1 200 OK\r\ntransfer-encoding');
    for (let i = 0; i <= end; i++) {
      for (let j = i; j <= end; j += 3) {
        const { p, seen } = parser();
        const socket = new LendingSocket(p);
        socket.deliver(STREAM.subarray(0, i));
        socket.deliver(STREAM.subarray(i, j));
        socket.deliver(STREAM.subarray(j));
        expect(seen).toEqual(EXPECTED);
      }
    }
  });

  it('gives the same responses fed a byte at a time', () => {
    const { p, seen } = parser();
    const socket = new LendingSocket(p);
    for (let i = 0; i < STREAM.length; i++) socket.deliver(STREAM.subarray(i, i + 1));
    expect(socket.errors.every((e) => e === undefined)).toBe(true);
    expect(seen).toEqual(EXPECTED);
  });

  it('reports a response as soon as its last byte is fed, not at the next feed', () => {
    const one = Buffer.from(response(['HTTP/1.1 200 OK', 'content-length: 36'], ID), 'latin1');
    const { p, seen } = parser();
    p.feed(one.subarray(0, one.length - 1));
    expect(seen).toEqual([]);
    p.feed(one.subarray(one.length - 1));
    expect(seen).toEqual([{ status: 200, body: ID, close: false, keepAliveMs: 0 }]);
  });

  it('takes a response without a reason phrase, and a status line alone', () => {
    const { p, seen } = parser();
    expect(p.feed(Buffer.from('HTTP/1.1 200\r\ncontent-length: 1\r\n\r\nxHTTP/1.1 204\r\n\r\n', 'latin1'))).toBeUndefined();
    expect(seen.map((s) => [s.status, s.body])).toEqual([[200, 'x'], [204, '']]);
  });

  it('closes after an HTTP/1.0 answer unless it says keep-alive', () => {
    const { p, seen } = parser();
    p.feed(Buffer.from(response(['HTTP/1.0 200 OK', 'content-length: 2'], 'ok'), 'latin1'));
    expect(seen).toEqual([{ status: 200, body: 'ok', close: true, keepAliveMs: 0 }]);
  });

  describe('refuses, with a reason, and then reads nothing more', () => {
    const cases: [string, string, HttpParserLimits?][] = [
      ['a body delimited by the close of the connection', response(['HTTP/1.1 200 OK', 'content-type: text/plain'], 'id')],
      ['a transfer coding other than chunked', response(['HTTP/1.1 200 OK', 'Transfer-Encoding: gzip, chunked'], '0\r\n\r\n')],
      ['chunked twice', response(['HTTP/1.1 200 OK', 'Transfer-Encoding: chunked', 'Transfer-Encoding: chunked'], '0\r\n\r\n')],
      ['two different Content-Lengths', response(['HTTP/1.1 200 OK', 'Content-Length: 2', 'Content-Length: 3'], 'abc')],
      ['a Content-Length that is not a number', response(['HTTP/1.1 200 OK', 'Content-Length: -2'], 'ab')],
      ['another protocol', response(['HTTP/2 200', 'content-length: 0'])],
      ['a status that is not three digits', response(['HTTP/1.1 2000 OK', 'content-length: 0'])],
      ['not HTTP at all', 'SSH-2.0-OpenSSH_9.6\r\n\r\n'],
      ['a header line without a name', response(['HTTP/1.1 200 OK', ': x', 'content-length: 0'])],
      ['a header line without a colon', response(['HTTP/1.1 200 OK', 'content-length 0'])],
      ['101 Switching Protocols', response(['HTTP/1.1 101 Switching Protocols', 'Upgrade: websocket'])],
      ['an invalid chunk size', response(['HTTP/1.1 200 OK', 'Transfer-Encoding: chunked'], 'zz\r\nhello\r\n0\r\n\r\n')],
      ['a chunk not followed by CRLF', response(['HTTP/1.1 200 OK', 'Transfer-Encoding: chunked'], '2\r\nabc\r\n0\r\n\r\n')],
      ['a head past its limit', response(['HTTP/1.1 200 OK', `x-long: ${'a'.repeat(200)}`, 'content-length: 0']), { maxHeadBytes: 100 }],
      ['a body past its limit', response(['HTTP/1.1 200 OK', 'content-length: 11'], 'hello world'), { maxBodyBytes: 10 }],
      ['a chunked body past its limit', response(['HTTP/1.1 200 OK', 'transfer-encoding: chunked'], '6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n'), { maxBodyBytes: 10 }],
    ];
    for (const [name, bytes, limits] of cases) {
      it(name, () => {
        // Whole, and a byte at a time: the same refusal either way (an unfinished head past its
        // limit is refused before its end is seen).
        for (const step of [bytes.length, 1]) {
          const { p, seen } = parser(limits);
          const data = Buffer.from(bytes, 'latin1');
          let error: string | undefined;
          for (let i = 0; i < data.length && error === undefined; i += step) error = p.feed(data.subarray(i, i + step));
          expect(error, `${name}, ${step} bytes at a time`).toEqual(expect.any(String));
          expect(seen).toEqual([]);
          expect(p.feed(Buffer.from(response(['HTTP/1.1 200 OK', 'content-length: 0']), 'latin1'))).toBe(error);
          expect(seen).toEqual([]);
        }
      });
    }
  });
});
