/**
 * POST /sms/sendbulk (messaging-service-api.md §4.1, §2.3): multipart with destinationNumberFile
 * (CSV or TXT, one number per line) and bulkRequest (a JSON string), in either order. The file is
 * read as it arrives, line by line, and its valid numbers are kept compactly (`DestinationList`,
 * at most `http.maxBulkNumbers` of them: 8 bytes a number, 16 while repeats are removed), never
 * the file. Nothing is stored before the whole upload has been read and counted: its parts (a
 * long text is several per number) must fit under `limits.maxQueued` and the client's
 * `clients[].maxQueued`, or the upload is refused whole (429). Its room is then held while its
 * numbers are committed in chunks, in the order of the file. At most `http.maxConcurrentUploads`
 * uploads are read at once, half of them at most of one client (`UploadSlots`): past that, 429
 * TOO_MANY_UPLOADS before any of the body is read, so the numbers held in memory stay bounded.
 *
 * A request that fails after a first chunk was committed (a store failure) aborts the batch it
 * started: its pending messages are not sent, though ones the dispatcher took already may be.
 *
 * With an Idempotency-Key (`bulk-idempotency.ts`) the request is fingerprinted by its bulkRequest
 * and its file's bytes (hashed as they are read), its key recorded with the first chunk, and its
 * response (success, or the error answered after that commit) at its end: a repeat is answered
 * the same status and body.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { Multipart, MultipartFile } from '@fastify/multipart';
import { extname } from 'node:path';
import { MAX_CONCURRENT_UPLOADS } from '../../config/schema.js';
import { assertSenderAllowed, type ApiClient } from '../../api/auth.js';
import { ApiError } from '../../api/errors.js';
import { IDEMPOTENCY_KEY_HEADER, idempotencyKeyOf, RequestFingerprint } from '../../api/idempotency-key.js';
import type { bulkResponseSchema } from '../../api/responses.js';
import { scheduleFrom, spacingMsOf } from '../../api/schedule-time.js';
import { regulatoryFrom } from '../../api/send-request.js';
import { bulkRequestSchema, parseInput, type BulkRequest } from '../../api/validation.js';
import { runKeyedUpload, type KeyedUpload } from './bulk-idempotency.js';
import type { HttpBulkWriter, RouteContext } from './context.js';
import { DestinationList } from './destination-list.js';
import { NumberTally, readLines } from './number-file.js';
import { UploadSlots } from './upload-slots.js';

/**
 * Numbers committed together. Each chunk is one write of the store, which holds the store's
 * other writes (claims, submit outcomes, receipts) while it runs: 1,000 keeps that to a few
 * milliseconds, so the binds stay fed while a large file is stored.
 */
const DEFAULT_CHUNK = 1000;
const FILE_PART = 'destinationNumberFile';
const REQUEST_PART = 'bulkRequest';
const FILE_TYPES = new Set(['', '.csv', '.txt']);
const USAGE = `sendbulk takes multipart/form-data with the parts ${FILE_PART} (a CSV or TXT file) and ${REQUEST_PART} (a JSON string)`;

/** §2.3. */
export type BulkResponse = z.output<typeof bulkResponseSchema>;

interface Job {
  request: BulkRequest;
  writer: HttpBulkWriter;
}

/** bulkRequest read and checked: as sent (parsed JSON, what is fingerprinted) and as validated. */
interface ParsedRequest {
  input: unknown;
  request: BulkRequest;
}

export function registerBulkRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const slots = new UploadSlots(ctx.deps.limits.maxConcurrentUploads ?? MAX_CONCURRENT_UPLOADS);
  app.post('/sms/sendbulk', { onRequest: ctx.limitRate }, async (request, reply) => new BulkUpload(ctx, slots, ctx.auth.clientOf(request), request, reply).run());
}

class BulkUpload {
  #job: Job | undefined;
  /** With an Idempotency-Key, the job starts once the whole body is read: a repeat may be answered without one. */
  #parsed: ParsedRequest | undefined;
  #key: { key: string; file: RequestFingerprint } | undefined;
  #fileSeen = false;
  readonly #tally = new NumberTally();
  readonly #numbers: DestinationList;
  readonly #chunkSize: number;

  constructor(
    private readonly ctx: RouteContext,
    private readonly slots: UploadSlots,
    private readonly client: ApiClient,
    private readonly request: FastifyRequest,
    private readonly reply: FastifyReply,
  ) {
    this.#chunkSize = ctx.deps.limits.bulkChunkSize ?? DEFAULT_CHUNK;
    this.#numbers = new DestinationList(ctx.deps.limits.maxBulkNumbers);
  }

  async run(): Promise<BulkResponse | FastifyReply> {
    const { limits } = this.ctx.deps;
    if (!this.request.isMultipart()) throw new ApiError('UNSUPPORTED_MEDIA_TYPE', USAGE);
    // Refuse a body that cannot fit before reading any of it; the file limit below catches the
    // rest (chunked uploads). The JSON limit is slack for bulkRequest and the part headers.
    const length = Number(this.request.headers['content-length']);
    if (Number.isFinite(length) && length > limits.maxUploadBytes + limits.maxBodyBytes) {
      throw new ApiError('PAYLOAD_TOO_LARGE', `the upload is ${length} bytes; ${FILE_PART} may be at most ${limits.maxUploadBytes} bytes`);
    }
    const key = idempotencyKeyOf(this.request.headers[IDEMPOTENCY_KEY_HEADER]);
    if (key !== undefined) this.#key = { key, file: new RequestFingerprint(FILE_PART) };
    let release: (() => void) | undefined;
    const socket = this.request.raw.socket;
    try {
      // Before any of the body is read. The slot is held until this handler ends, not merely until
      // the body is read: the numbers stay in memory until they are stored.
      release = this.slots.take(this.client.name);
      socket.once('close', this.#failUnfinishedBody);
      for await (const part of multipartErrors(this.request.parts({ limits: { fileSize: limits.maxUploadBytes, fieldSize: limits.maxBodyBytes } }))) {
        await this.#part(part);
      }
      const parsed = this.#parsed;
      if (!this.#job && !parsed) throw new ApiError('INVALID_MULTIPART', `${REQUEST_PART}: is required; ${USAGE}`);
      if (!this.#fileSeen) throw new ApiError('INVALID_MULTIPART', `${FILE_PART}: is required; ${USAGE}`);
      if (this.#key === undefined || parsed === undefined) return await this.#store(this.#job!);
      return await runKeyedUpload(this.#keyed(parsed, this.#key.key, this.#key.file.digest()));
    } catch (e) {
      // The rest of the body may still be on its way: do not keep the connection for it.
      if (!this.request.raw.complete) this.reply.header('connection', 'close');
      await this.#abandon(e);
      throw e;
    } finally {
      socket.off('close', this.#failUnfinishedBody);
      this.#job?.writer.close();
      release?.();
    }
  }

  /**
   * The connection closed before the body was whole. When the listener answered for the request
   * (408 at http.bulkRequestTimeoutSeconds), Node no longer fails a body it has stopped waiting
   * for: the reading would wait for ever, with the numbers read so far and the upload's slot.
   * Failing the body ends the reading, and nothing of it is stored.
   */
  readonly #failUnfinishedBody = (): void => {
    const req = this.request.raw;
    if (!req.complete && !req.destroyed) req.destroy(Object.assign(new Error('the connection closed before the upload arrived whole'), { code: 'ECONNRESET' }));
  };

  async #part(part: Multipart): Promise<void> {
    if (part.type === 'field') {
      if (part.fieldname !== REQUEST_PART) throw new ApiError('INVALID_MULTIPART', `${part.fieldname}: unknown part; ${USAGE}`);
      if (this.#job || this.#parsed) throw new ApiError('INVALID_MULTIPART', `${REQUEST_PART}: given twice`);
      if (part.valueTruncated) throw new ApiError('PAYLOAD_TOO_LARGE', `${REQUEST_PART}: is larger than ${this.ctx.deps.limits.maxBodyBytes} bytes`);
      const parsed = this.#parse(part.value);
      if (this.#key === undefined) this.#job = await this.#start(parsed.request);
      else this.#parsed = parsed;
      return;
    }
    if (part.fieldname !== FILE_PART || this.#fileSeen) {
      part.file.resume(); // drain it: the answer is an error either way
      throw new ApiError('INVALID_MULTIPART', part.fieldname === FILE_PART ? `${FILE_PART}: given twice` : `${part.fieldname}: unknown part; ${USAGE}`);
    }
    this.#fileSeen = true;
    const type = extname(part.filename ?? '').toLowerCase();
    if (!FILE_TYPES.has(type)) {
      part.file.resume();
      throw new ApiError('VALIDATION', `${FILE_PART}: must be a CSV or TXT file with one number per line, not ${type}`);
    }
    await this.#readNumbers(part);
  }

  /** bulkRequest: parsed and checked (VALIDATION, INVALID_JSON). */
  #parse(value: unknown): ParsedRequest {
    let input = value;
    if (typeof value === 'string') {
      try {
        input = JSON.parse(value);
      } catch {
        throw new ApiError('INVALID_JSON', `${REQUEST_PART}: is not valid JSON`);
      }
    }
    return { input, request: parseInput(bulkRequestSchema, input, `${REQUEST_PART}.`, REQUEST_PART) };
  }

  /** The job: its sender allowed, its schedule, its text composed once (QUEUE_FULL and TEXT_NOT_GSM7 come from here). */
  async #start(request: BulkRequest): Promise<Job> {
    assertSenderAllowed(this.client, request.senderId);
    const { clock, acceptor } = this.ctx.deps;
    const schedule = scheduleFrom({ flag: request.schedule, time: request.time, gmt: request.gmt, repeat: request.repeat }, 'schedule', `${REQUEST_PART}.`, clock.wallNow());
    const regulatory = regulatoryFrom(request);
    const writer = await acceptor.startBulk({
      client: this.client.name,
      senderId: request.senderId,
      message: request.message,
      messageType: request.messageType,
      ...(request.expiryHour != null ? { expiryHour: request.expiryHour } : {}),
      ...(request.campaignName != null ? { campaignName: request.campaignName } : {}),
      ...(schedule ? { schedule } : {}),
      spacingMs: spacingMsOf(request.delay),
      ...(regulatory ? { regulatory } : {}),
    });
    return { request, writer };
  }

  /** Reads the file's valid numbers as they arrive, into the list; more than it takes is 413. */
  async #readNumbers(part: MultipartFile): Promise<void> {
    const fingerprint = this.#key?.file;
    for await (const line of multipartErrors(readLines(fingerprint ? hashed(part.file, fingerprint) : part.file))) {
      const n = this.#tally.line(line);
      if (n === null || this.#numbers.push(n)) continue;
      throw new ApiError('PAYLOAD_TOO_LARGE', `${FILE_PART}: holds more than ${this.#numbers.max} numbers, the most one upload may have (http.maxBulkNumbers): split it`);
    }
    // busboy stops a file at the limit and marks it truncated: the part read was not the whole file.
    if ((part.file as { truncated?: boolean }).truncated) {
      throw new ApiError('PAYLOAD_TOO_LARGE', `${FILE_PART}: is larger than ${this.ctx.deps.limits.maxUploadBytes} bytes`);
    }
  }

  /**
   * The whole upload is read: its numbers (repeats removed unless allowed) are counted against the
   * caps on queued parts (QUEUE_FULL: refused whole, nothing stored), then stored in chunks.
   */
  async #store(job: Job): Promise<BulkResponse> {
    // Repeats are removed unless the request allows them: a number sent twice by mistake costs twice.
    const toSend = this.#numbers.toSend(job.request.allowDuplicate !== true);
    const info = this.#tally.info(toSend);
    if (toSend.count === 0) {
      const reasons = Object.entries(info.errors).map(([reason, n]) => `${reason} ${n}`).join(', ');
      throw new ApiError('VALIDATION', `${FILE_PART}: holds no valid number (${info.total} read, ${info.invalidCount} invalid${reasons ? `: ${reasons}` : ''}, ${info.duplicate} duplicate)`);
    }
    // A number no route takes refuses the job whole, before anything is stored (NO_ROUTE); the
    // room it reserves is what each number's route makes of the text.
    job.writer.checkRoutes(toSend.chunks(this.#chunkSize));
    await job.writer.reserve(toSend.count);
    for (const chunk of toSend.chunks(this.#chunkSize)) await job.writer.add(chunk);
    this.ctx.deps.log.info({ event: 'bulk_accepted', client: this.client.name, batchId: job.writer.batchId, ...info }, 'sendbulk accepted');
    // smppd keeps no balance: credits and deductcredits are what the job costs, in parts.
    const credits = String(job.writer.parts);
    return { status: 'success', bulkSessionId: String(job.writer.batchId), credits, deductcredits: credits, bulkListInfo: info };
  }

  /** After a failure: a batch already started is aborted so that a refused upload sends nothing more. */
  async #abandon(cause: unknown): Promise<void> {
    const batchId = this.#job?.writer.batchId;
    if (batchId == null) return;
    await this.#abort(batchId, cause instanceof Error ? cause.message : String(cause));
  }

  /** Aborts a batch an upload started and could not finish; says so in the log either way. */
  async #abort(batchId: number, reason: string): Promise<void> {
    const { store, clock, log } = this.ctx.deps;
    try {
      await this.ctx.serial.run(`batch:${batchId}`, () => store.setBatchState(this.client.name, batchId, 'aborted', clock.wallNow()));
      log.warn({ event: 'bulk_abandoned', client: this.client.name, batchId, reason }, 'sendbulk failed part way; its batch is aborted');
    } catch (e) {
      log.error({ event: 'bulk_abandon_failed', client: this.client.name, batchId, reason, err: e instanceof Error ? e.message : String(e) }, 'sendbulk failed part way and its batch could not be aborted');
    }
  }

  /** The upload as `runKeyedUpload` runs it: the whole body is read, the fingerprint known. */
  #keyed(parsed: ParsedRequest, key: string, fileDigest: string): KeyedUpload<BulkResponse> {
    return {
      ctx: this.ctx, request: this.request, reply: this.reply, key, client: this.client.name,
      fingerprint: new RequestFingerprint('POST /sms/sendbulk').json(parsed.input).json(fileDigest).digest(),
      run: async (idempotencyKey) => {
        // A second run (the key was taken by another instance meanwhile, then expired): a new job.
        this.#job?.writer.close();
        const job = this.#job = await this.#start(parsed.request);
        job.writer.keyedBy(idempotencyKey);
        return this.#store(job);
      },
      committed: () => this.#job?.writer.batchId != null,
      abort: (batchId, reason) => this.#abort(batchId, reason),
    };
  }
}

/** The bytes of `stream` as they pass, into `fingerprint`. */
async function* hashed(stream: AsyncIterable<Buffer>, fingerprint: RequestFingerprint): AsyncGenerator<Buffer> {
  for await (const chunk of stream) {
    fingerprint.bytes(chunk);
    yield chunk;
  }
}

/** busboy's errors (a cut body, a bad boundary) carry no code: they are the client's malformed multipart. */
function asMultipartError(e: unknown): unknown {
  if (e instanceof ApiError) return e;
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code.startsWith('FST_')) return e;
  const detail = e instanceof Error ? `: ${e.message}` : '';
  return new ApiError('INVALID_MULTIPART', `the multipart body is malformed${detail}`);
}

/** An async iterable whose failures are turned into INVALID_MULTIPART (a consumer's own errors pass untouched). */
async function* multipartErrors<T>(source: AsyncIterable<T>): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      let next: IteratorResult<T>;
      try {
        next = await it.next();
      } catch (e) {
        throw asMultipartError(e);
      }
      if (next.done) return;
      yield next.value;
    }
  } finally {
    await it.return?.();
  }
}
