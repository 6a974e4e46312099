/**
 * The benchmark's HTTP load generator against a stub daemon on 127.0.0.1 (node:http): what the
 * generator counts is checked against what the stub saw and answered, never against the clock.
 * The stub names every 200 answer after the request's number in the generator's sequence (the
 * last nine digits of its destinationNumber), so warm-up and measured requests can be told apart.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { getJson, postBulkFile, runSendSmsLoad, sendSmsBody, type HttpTarget, type LoadResult } from '../src/load.js';

const TOKEN = 'bench-token-0123456789abcdef';

/** One POST /sms/sendSms as the stub received it; `k` counts the POSTs from 1 in arrival order. */
interface SeenPost {
  k: number;
  /** The request's number in the generator's sequence (from its destinationNumber). */
  n: number;
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
}

/** How the stub answers one sendSms: it calls `stub.reply`, `stub.drop`, or keeps `res` for later. */
type Answer = (stub: StubDaemon, post: SeenPost, res: ServerResponse) => void;

/** A stub of the daemon's HTTP API, counting what it saw and what it answered. */
class StubDaemon {
  readonly gets: { url: string; authorization: string | undefined }[] = [];
  /** The sendSms requests, each once its body is read. */
  readonly posts: SeenPost[] = [];
  /** The sendSms requests that arrived (headers read). */
  seen = 0;
  /** The sendSms answers in the order they were written. */
  readonly answers: { status: number; body: string }[] = [];
  /** sendSms requests whose connection the stub destroyed instead of answering. */
  dropped = 0;
  connections = 0;
  inFlight = 0;
  maxInFlight = 0;
  readonly #server: Server;

  private constructor(answer: Answer) {
    this.#server = createServer((req, res) => void this.#handle(req, res, answer));
    this.#server.on('connection', () => this.connections++);
  }

  /** `configure` may set the server's options (its keepAliveTimeout) before it listens. */
  static async start(answer: Answer, configure?: (server: Server) => void): Promise<StubDaemon> {
    const stub = new StubDaemon(answer);
    configure?.(stub.#server);
    await new Promise<void>((resolve) => stub.#server.listen(0, '127.0.0.1', resolve));
    return stub;
  }

  get target(): HttpTarget {
    return { port: (this.#server.address() as AddressInfo).port, token: TOKEN };
  }

  /** 200 with the id `id-<n>` as the body, or another status with a JSON error. */
  reply(post: SeenPost, res: ServerResponse, status = 200): void {
    const body = status === 200 ? `id-${post.n}` : JSON.stringify({ error: `status ${status}` });
    this.answers.push({ status, body });
    res.writeHead(status, { 'content-type': status === 200 ? 'text/plain' : 'application/json' }).end(body);
  }

  /** Destroys the connection the request came on: the client gets no answer. */
  drop(res: ServerResponse): void {
    this.dropped++;
    res.socket?.destroy();
  }

  count(status: number): number {
    return this.answers.filter((a) => a.status === status).length;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse, answer: Answer): Promise<void> {
    if (req.method === 'GET') {
      this.gets.push({ url: req.url ?? '', authorization: req.headers.authorization });
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    const k = ++this.seen;
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    res.on('close', () => this.inFlight--);
    const body = await readBody(req);
    const m = /"destinationNumber":"4477(\d{9})"/.exec(body.toString('utf8'));
    const post: SeenPost = {
      k, n: m ? Number(m[1]) : -1, authorization: req.headers.authorization, contentType: req.headers['content-type'], body: body.toString('utf8'),
    };
    this.posts.push(post);
    answer(this, post, res);
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const answerAll: Answer = (stub, post, res) => stub.reply(post, res);

function sumRefused(r: LoadResult): number {
  return Object.values(r.refused).reduce((a, b) => a + b, 0);
}

/** The request numbers behind the ids, sorted. */
function idNumbers(ids: string[]): number[] {
  return ids.map((id) => Number(id.replace('id-', ''))).sort((a, b) => a - b);
}

function range(from: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => from + i);
}

let stubs: StubDaemon[] = [];
async function startStub(answer: Answer, configure?: (server: Server) => void): Promise<StubDaemon> {
  const stub = await StubDaemon.start(answer, configure);
  stubs.push(stub);
  return stub;
}

afterEach(async () => {
  await Promise.all(stubs.map((s) => s.close()));
  stubs = [];
});

describe('runSendSmsLoad, closed loop', () => {
  it('counts every request once: accepted, refused by status, or a connection error, as the stub saw them', async () => {
    // k = 2, 3, 4 hit each case, so a run of the first `concurrency` (4) requests already has all of them.
    const stub = await startStub((s, post, res) => {
      if (post.k % 11 === 4) s.drop(res);
      else if (post.k % 13 === 3) s.reply(post, res, 503);
      else if (post.k % 7 === 2) s.reply(post, res, 429);
      else s.reply(post, res);
    });
    const r = await runSendSmsLoad(stub.target, { concurrency: 4, seconds: 0.3, ratePerSecond: 0 });

    expect(r.offered).toBeGreaterThanOrEqual(4);
    expect(r.accepted + sumRefused(r) + r.errors).toBe(r.offered);
    // Every error here is a connection the stub destroyed after reading the request, so every
    // request reached it: what it saw is exactly what was offered (no retry of a POST either).
    expect(stub.posts).toHaveLength(r.offered);
    expect(r.errors).toBe(stub.dropped);
    expect(r.errors).toBeGreaterThan(0);
    expect(r.refused).toEqual({ 429: stub.count(429), 503: stub.count(503) });
    expect(stub.count(429)).toBeGreaterThan(0);
    expect(stub.count(503)).toBeGreaterThan(0);
    expect(r.accepted).toBe(stub.count(200));
    expect(r.skipped).toBe(0);
    // The ids are the 200 bodies, each once.
    expect(r.ids).toHaveLength(r.accepted);
    expect([...r.ids].sort()).toEqual(stub.answers.filter((a) => a.status === 200).map((a) => a.body).sort());
    expect(new Set(r.ids).size).toBe(r.ids.length);
    // Latency is of the accepted requests only; relations, not speed.
    expect(r.p50Ms).toBeGreaterThanOrEqual(0);
    expect(r.p50Ms).toBeLessThanOrEqual(r.p99Ms);
    expect(r.p99Ms).toBeLessThanOrEqual(r.maxMs + 0.06); // maxMs is rounded to 0.1 ms (±0.05), p99 to 0.01
    expect(r.offeredPerSecond).toBeCloseTo(r.offered / 0.3, 0);
  });

  it('never has more requests in flight than its concurrency, over that many keep-alive connections', async () => {
    const stub = await startStub(answerAll);
    const r = await runSendSmsLoad(stub.target, { concurrency: 3, seconds: 0.2, ratePerSecond: 0 });
    expect(r.accepted).toBe(r.offered);
    expect(stub.maxInFlight).toBeLessThanOrEqual(3);
    expect(stub.connections).toBe(3);
  });

  it('lists the ids in the order the answers came, not the order the requests went', async () => {
    // The first three requests are held, then answered last-come first, 30 ms apart; the rest at once.
    const first: { post: SeenPost; res: ServerResponse }[] = [];
    const stub = await startStub((s, post, res) => {
      if (post.k > 3) return s.reply(post, res);
      first.push({ post, res });
      if (first.length < 3) return;
      first.sort((x, y) => y.post.k - x.post.k).forEach((h, i) => setTimeout(() => s.reply(h.post, h.res), i * 30));
    });
    const r = await runSendSmsLoad(stub.target, { concurrency: 3, seconds: 0.2, ratePerSecond: 0 });
    const arrival = stub.posts.filter((p) => p.k <= 3).sort((a, b) => a.k - b.k).map((p) => `id-${p.n}`);
    const written = stub.answers.map((a) => a.body);
    expect(written.filter((id) => arrival.includes(id))).toEqual([...arrival].reverse());
    expect(r.accepted).toBe(r.offered);
    expect(r.ids).toEqual(written);
  });

  it('sends each request with the bearer token and a distinct sendSms JSON body', async () => {
    const stub = await startStub(answerAll);
    const r = await runSendSmsLoad(stub.target, { concurrency: 2, seconds: 0.1, ratePerSecond: 0 });
    expect(stub.posts).toHaveLength(r.offered);
    for (const post of stub.posts) {
      expect(post.authorization).toBe(`Bearer ${TOKEN}`);
      expect(post.contentType).toBe('application/json');
      const body = JSON.parse(post.body) as Record<string, unknown>;
      expect(body).toEqual({
        senderId: 'Bench',
        destinationNumber: expect.stringMatching(/^4477\d{9}$/),
        message: 'Your verification code is 123456. It expires in 10 minutes.',
        messageType: 'TEXT',
      });
      expect(post.body).toBe(sendSmsBody(post.n));
    }
    // Numbered 0, 1, 2, … in the order issued: one number per request.
    expect(stub.posts.map((p) => p.n).sort((a, b) => a - b)).toEqual(range(0, r.offered));
    // The pool's connections are opened first with one GET each, with the token too.
    expect(stub.gets).toEqual([
      { url: '/sms/status/bench-connect', authorization: `Bearer ${TOKEN}` },
      { url: '/sms/status/bench-connect', authorization: `Bearer ${TOKEN}` },
    ]);
  });

  it('does not count the warm-up, and calls onMeasureStart once when the measured part begins', async () => {
    const stub = await startStub(answerAll);
    let starts = 0;
    let seenAtStart = -1;
    const r = await runSendSmsLoad(stub.target, {
      concurrency: 2, seconds: 0.2, ratePerSecond: 0, warmupSeconds: 0.2,
      onMeasureStart: () => {
        starts++;
        seenAtStart = stub.seen;
      },
    });
    expect(starts).toBe(1);
    const warmup = stub.posts.length - r.offered;
    // Both connections send at once, in the warm-up; when it ends, at most those two are unseen.
    expect(warmup).toBeGreaterThanOrEqual(2);
    expect(warmup).toBeGreaterThanOrEqual(seenAtStart);
    expect(warmup).toBeLessThanOrEqual(seenAtStart + 2);
    expect(r.accepted).toBe(r.offered);
    // Requests are numbered in the order issued: the measured ones are exactly those after the warm-up.
    expect(idNumbers(r.ids)).toEqual(range(warmup, r.offered));
  });

  it('begins the measured part when the warm-up ends even if no answer comes then', async () => {
    // Each POST answered after 600 ms: nothing is answered between the end of the warm-up (0.2 s) and the end (0.5 s).
    const stub = await startStub((s, post, res) => { setTimeout(() => s.reply(post, res), 600); });
    let starts = 0;
    const r = await runSendSmsLoad(stub.target, { concurrency: 2, seconds: 0.3, ratePerSecond: 0, warmupSeconds: 0.2, onMeasureStart: () => starts++ });
    expect(starts).toBe(1);
    expect(r.offered).toBe(0); // both requests went in the warm-up, and no answer came to send another
    expect(r.accepted).toBe(0);
  });
});

describe('runSendSmsLoad, open loop', () => {
  it('offers rate × seconds against a fast daemon, and skips none', async () => {
    const stub = await startStub(answerAll);
    // maxPending well above what a busy machine could leave unanswered at 200/s, so nothing is skipped.
    const r = await runSendSmsLoad(stub.target, { concurrency: 4, seconds: 1, ratePerSecond: 200, maxPending: 50 });
    expect(r.skipped).toBe(0);
    // The schedule is summed exactly to its end: 200 requests, one fewer for rounding.
    expect(r.offered).toBeGreaterThanOrEqual(199);
    expect(r.offered).toBeLessThanOrEqual(200);
    expect(stub.posts).toHaveLength(r.offered);
    expect(r.accepted).toBe(r.offered);
    expect(r.errors).toBe(0);
    expect(r.refused).toEqual({});
    expect(idNumbers(r.ids)).toEqual(range(0, r.offered));
  });

  it('skips instead of queueing when maxPending are unanswered, and keeps no more than that pending', async () => {
    // Holds every sendSms until the schedule is over (its end timer is armed before ours, with a
    // shorter delay: it fires first however late both are), then answers all.
    const held: { post: SeenPost; res: ServerResponse }[] = [];
    let released = false;
    const stub = await startStub((s, post, res) => (released ? s.reply(post, res) : held.push({ post, res })));
    const seconds = 0.3;
    const r = await runSendSmsLoad(stub.target, {
      concurrency: 4, seconds, ratePerSecond: 200, maxPending: 3,
      onMeasureStart: () => {
        setTimeout(() => {
          released = true;
          for (const h of held.splice(0)) stub.reply(h.post, h.res);
        }, seconds * 1000 + 100);
      },
    });
    expect(r.offered).toBe(3);
    expect(r.offered + r.skipped).toBeGreaterThanOrEqual(59);
    expect(r.offered + r.skipped).toBeLessThanOrEqual(60);
    expect(stub.maxInFlight).toBeLessThanOrEqual(3);
    expect(stub.posts).toHaveLength(3);
    expect(r.accepted).toBe(3); // the pending ones are waited for
    expect(idNumbers(r.ids)).toEqual([0, 1, 2]);
  });

  it('does not count the warm-up: neither its requests, their answers, nor its skips', async () => {
    const stub = await startStub(answerAll);
    let starts = 0;
    const r = await runSendSmsLoad(stub.target, {
      concurrency: 4, seconds: 0.3, ratePerSecond: 200, warmupSeconds: 0.2, maxPending: 50,
      onMeasureStart: () => starts++,
    });
    expect(starts).toBe(1);
    const warmup = stub.posts.length - r.offered;
    expect(warmup).toBeGreaterThan(0);
    expect(r.skipped).toBe(0);
    // The measured schedule is 60 (the tick that crosses the end of the warm-up is split there).
    // Never the 100 of the whole run.
    expect(r.offered).toBeGreaterThanOrEqual(59);
    expect(r.offered).toBeLessThan(100);
    expect(r.accepted).toBe(r.offered);
    expect(idNumbers(r.ids)).toEqual(range(warmup, r.offered));
  });

  it('a daemon silent across the end of the warm-up: the warm-up part of the schedule is not counted', async () => {
    // Holds everything until 0.7 s; the schedule is 0.2 s of warm-up then 0.3 s measured at 200/s.
    const held: { post: SeenPost; res: ServerResponse }[] = [];
    const stub = await startStub((_s, post, res) => { held.push({ post, res }); });
    const release = setTimeout(() => { for (const h of held.splice(0)) stub.reply(h.post, h.res); }, 700);
    let starts = 0;
    const r = await runSendSmsLoad(stub.target, {
      concurrency: 2, seconds: 0.3, ratePerSecond: 200, warmupSeconds: 0.2, maxPending: 2, onMeasureStart: () => starts++,
    });
    clearTimeout(release);
    expect(starts).toBe(1);
    // Both pending slots went in the warm-up; the measured 60 slots were all skipped (one fewer for rounding).
    expect(r.offered).toBe(0);
    expect(r.skipped).toBeGreaterThanOrEqual(59);
    expect(r.skipped).toBeLessThanOrEqual(60);
  });
});

describe('runSendSmsLoad, its connections', () => {
  it('counts a request whose connection is dropped as one error, opens the connection again, and goes on', async () => {
    // One connection: the load goes on only if it is opened again after each drop.
    const stub = await startStub((s, post, res) => (post.k === 1 || post.k === 3 ? s.drop(res) : s.reply(post, res)));
    const r = await runSendSmsLoad(stub.target, { concurrency: 1, seconds: 0.2, ratePerSecond: 0 });
    expect(r.errors).toBe(2);
    expect(r.offered).toBeGreaterThan(3);
    expect(r.accepted).toBe(r.offered - 2);
    expect(stub.posts).toHaveLength(r.offered); // not sent again
    expect(stub.connections).toBe(3);
    expect(idNumbers(r.ids)).toEqual(range(0, r.offered).filter((n) => n !== 0 && n !== 2));
  });

  it('honours Connection: close: the answer counts, and the next request goes on a new connection', async () => {
    let closes = 0;
    const stub = await startStub((s, post, res) => {
      if (post.k % 3 === 0) {
        closes++;
        res.setHeader('connection', 'close');
      }
      s.reply(post, res);
    });
    const r = await runSendSmsLoad(stub.target, { concurrency: 2, seconds: 0.2, ratePerSecond: 0 });
    expect(closes).toBeGreaterThan(2);
    expect(r.errors).toBe(0);
    expect(r.accepted).toBe(r.offered);
    expect(stub.posts).toHaveLength(r.offered);
    expect(stub.maxInFlight).toBeLessThanOrEqual(2);
    // A closed connection is opened again when next used: after each close but (at most) the last on each.
    expect(stub.connections).toBeGreaterThanOrEqual(2 + closes - 2);
    expect(stub.connections).toBeLessThanOrEqual(2 + closes);
  });

  it('opens a connection the server closed while idle again when next used, and counts nothing for it', async () => {
    // The stub closes each connection as soon as its answer is written; open loop, one request per 20 ms.
    const stub = await startStub((s, post, res) => {
      const socket = res.socket;
      res.on('finish', () => socket?.end());
      s.reply(post, res);
    });
    const r = await runSendSmsLoad(stub.target, { concurrency: 2, seconds: 0.3, ratePerSecond: 50, maxPending: 2 });
    expect(r.offered).toBeGreaterThanOrEqual(14);
    expect(r.errors).toBe(0);
    expect(r.accepted).toBe(r.offered);
    expect(stub.connections).toBeGreaterThanOrEqual(r.offered);
  });

  it('does not use a connection past the server\'s Keep-Alive hint less a second', async () => {
    // keepAliveTimeout 1 s: node answers "Keep-Alive: timeout=1", so no connection is used twice.
    const stub = await startStub(answerAll, (server) => { server.keepAliveTimeout = 1000; });
    const r = await runSendSmsLoad(stub.target, { concurrency: 1, seconds: 0.1, ratePerSecond: 0 });
    expect(r.errors).toBe(0);
    expect(r.accepted).toBe(r.offered);
    expect(stub.connections).toBe(1 + r.offered);
  });

  it('counts a non-200 answer in refused by status, with no id, and keeps the connection', async () => {
    const stub = await startStub((s, post, res) => s.reply(post, res, 503));
    const r = await runSendSmsLoad(stub.target, { concurrency: 2, seconds: 0.1, ratePerSecond: 0 });
    expect(r.offered).toBeGreaterThan(2);
    expect(r.refused).toEqual({ 503: r.offered });
    expect(r.accepted).toBe(0);
    expect(r.ids).toEqual([]);
    expect(r.errors).toBe(0);
    expect(stub.connections).toBe(2);
  });

  it('reads a chunked answer', async () => {
    // Two writes and no Content-Length: node sends the body chunked.
    const stub = await startStub((s, post, res) => {
      s.answers.push({ status: 200, body: `id-${post.n}` });
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('id-');
      res.end(String(post.n));
    });
    const r = await runSendSmsLoad(stub.target, { concurrency: 2, seconds: 0.1, ratePerSecond: 0 });
    expect(r.errors).toBe(0);
    expect(r.accepted).toBe(r.offered);
    expect(r.ids).toEqual(stub.answers.map((a) => a.body));
    expect(stub.connections).toBe(2);
  });

  it('open loop with more pending than connections: requests wait for a free connection, in order', async () => {
    // One connection, answers after 15 ms, 100 requests/s offered: they queue in the client.
    const stub = await startStub((s, post, res) => { setTimeout(() => s.reply(post, res), 15); });
    const r = await runSendSmsLoad(stub.target, { concurrency: 1, seconds: 0.3, ratePerSecond: 100, maxPending: 5 });
    expect(stub.maxInFlight).toBe(1);
    expect(stub.connections).toBe(1);
    expect(r.offered).toBeGreaterThan(5);
    expect(r.accepted).toBe(r.offered);
    expect(r.offered + r.skipped).toBeGreaterThanOrEqual(29);
    // One connection: answered in the order issued.
    expect(r.ids).toEqual(range(0, r.offered).map((n) => `id-${n}`));
  });

  it('counts an answer it cannot read (no Content-Length, no chunks) as an error, and drops that connection', async () => {
    // A raw server that answers each request with a body delimited by the close, and keeps the connection.
    const sockets: Socket[] = [];
    let requests = 0;
    const server = createNetServer((socket) => {
      sockets.push(socket);
      socket.on('data', () => {
        requests++;
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nid');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const r = await runSendSmsLoad({ port: (server.address() as AddressInfo).port, token: TOKEN }, { concurrency: 1, seconds: 0.1, ratePerSecond: 0 });
      expect(r.offered).toBeGreaterThan(1);
      expect(r.errors).toBe(r.offered);
      expect(r.accepted).toBe(0);
      // The greeting, then one request per connection.
      expect(sockets).toHaveLength(1 + r.offered);
      expect(requests).toBe(1 + r.offered);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('getJson', () => {
  it('GETs with the bearer token and returns the status and the parsed body', async () => {
    const stub = await startStub(answerAll);
    const res = await getJson<{ error: string }>(stub.target, '/sms/status/abc');
    expect(res).toEqual({ status: 404, body: { error: 'not found' } });
    expect(stub.gets).toEqual([{ url: '/sms/status/abc', authorization: `Bearer ${TOKEN}` }]);
  });
});

describe('postBulkFile', () => {
  interface Upload { headers: IncomingMessage['headers']; url: string; body: Buffer }

  /** A server that keeps the whole upload and answers `status` with `text`. */
  async function uploadServer(status: number, text: string): Promise<{ target: HttpTarget; uploads: Upload[]; close: () => Promise<void> }> {
    const uploads: Upload[] = [];
    const server = createServer((req, res) => {
      void readBody(req).then((body) => {
        uploads.push({ headers: req.headers, url: req.url ?? '', body });
        res.writeHead(status).end(text);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    return {
      target: { port, token: TOKEN },
      uploads,
      close: () => {
        server.closeAllConnections();
        return new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  }

  /** The parts of a multipart/form-data body (RFC 7578), each its header block and its exact bytes. */
  function parseMultipart(body: Buffer, boundary: string): { headers: string; data: Buffer }[] {
    const open = Buffer.from(`--${boundary}`);
    const next = Buffer.from(`\r\n--${boundary}`);
    expect(body.subarray(0, open.length).equals(open)).toBe(true);
    const parts: { headers: string; data: Buffer }[] = [];
    let at = open.length;
    for (;;) {
      const after = body.subarray(at, at + 2).toString('latin1');
      if (after === '--') {
        expect(body.subarray(at + 2).toString('latin1')).toBe('\r\n');
        return parts;
      }
      expect(after).toBe('\r\n');
      const headEnd = body.indexOf('\r\n\r\n', at);
      const end = body.indexOf(next, headEnd + 4);
      expect(end).toBeGreaterThan(0);
      parts.push({ headers: body.subarray(at + 2, headEnd).toString('utf8'), data: body.subarray(headEnd + 4, end) });
      at = end + next.length;
    }
  }

  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  /** Several read chunks of numbers (LF and CRLF), then every byte value: copied, never re-encoded. */
  function numbersFile(): { path: string; bytes: Buffer } {
    dir = mkdtempSync(join(tmpdir(), 'smppd-bench-load-'));
    const lines = range(0, 20_000).map((i) => `4477${String(i).padStart(9, '0')}${i % 3 === 0 ? '\r\n' : '\n'}`).join('');
    const bytes = Buffer.concat([Buffer.from(lines), Buffer.from(range(0, 256)), Buffer.from('\r\n--not-the-boundary\r\n')]);
    const path = join(dir, 'numbers.txt');
    writeFileSync(path, bytes);
    return { path, bytes };
  }

  it('streams the file as the destinationNumberFile part after the bulkRequest field, with its length', async () => {
    const { path, bytes } = numbersFile();
    const server = await uploadServer(202, '{"batchId":"b-1","accepted":20000}');
    try {
      const bulkRequest = { senderId: 'Bench', message: 'Hello', messageType: 'TEXT' };
      const res = await postBulkFile(server.target, path, bulkRequest);
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ batchId: 'b-1', accepted: 20_000 });
      expect(res.ms).toBeGreaterThanOrEqual(0);

      expect(server.uploads).toHaveLength(1);
      const up = server.uploads[0]!;
      expect(up.url).toBe('/sms/sendbulk');
      expect(up.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(up.headers['transfer-encoding']).toBeUndefined();
      expect(Number(up.headers['content-length'])).toBe(up.body.length);
      const boundary = /^multipart\/form-data; boundary=(.+)$/.exec(up.headers['content-type'] ?? '')?.[1];
      expect(boundary).toBeDefined();

      const parts = parseMultipart(up.body, boundary!);
      expect(parts).toHaveLength(2);
      expect(parts[0]!.headers).toBe('Content-Disposition: form-data; name="bulkRequest"');
      expect(JSON.parse(parts[0]!.data.toString('utf8'))).toEqual(bulkRequest);
      expect(parts[1]!.headers).toMatch(/^Content-Disposition: form-data; name="destinationNumberFile"; filename="[^"]+"\r\n/);
      expect(parts[1]!.data.equals(bytes)).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('returns an answer that is not JSON as text', async () => {
    const { path } = numbersFile();
    const server = await uploadServer(413, 'upload too large');
    try {
      const res = await postBulkFile(server.target, path, {});
      expect(res).toMatchObject({ status: 413, body: 'upload too large' });
    } finally {
      await server.close();
    }
  });
});
