/**
 * A sendbulk upload with an Idempotency-Key (draft-ietf-httpapi-idempotency-key-header), once
 * its whole body is read and fingerprinted: run through the idempotency gate. Its key is
 * recorded pending with its first chunk, under this instance; at its end its response is
 * recorded, success or the error answered (a failure after that first commit: its batch is
 * aborted, as without a key), and a repeat is answered that status and body. An upload refused
 * before its first commit records nothing: its repeat is run anew.
 *
 * A repeat that finds the key pending with nobody running it (the process that ran it stopped,
 * or it could not record its response) cannot know how far it got: it aborts the upload's batch,
 * as the upload itself would have, and records and answers 500 naming the batch. What of the
 * batch was sent stays sent; the client sends the rest with a new key (GET the batch to see it).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../api/errors.js';
import { ErrorCode, SmppdError } from '../../core/errors.js';
import type { IdempotencyKeyRef, IdempotentResponse, NewIdempotencyKey } from '../../store/idempotency.js';
import type { RouteContext } from './context.js';
import { errorResponseOf, sendRecorded } from './error-replies.js';

/** What `runKeyedUpload` needs of an upload. */
export interface KeyedUpload<R> {
  ctx: RouteContext;
  request: FastifyRequest;
  reply: FastifyReply;
  client: string;
  key: string;
  /** Of the endpoint, the bulkRequest as sent and the file's bytes. */
  fingerprint: string;
  /** Stores the upload with `key` recorded pending with its first chunk; resolves with the response (throws what it refuses). */
  run(key: NewIdempotencyKey): Promise<R>;
  /** Whether `run` committed a first chunk (and the key with it). */
  committed(): boolean;
  /** Aborts the batch of an upload that will not finish. */
  abort(batchId: number, reason: string): Promise<void>;
}

export async function runKeyedUpload<R extends object>(u: KeyedUpload<R>): Promise<R | FastifyReply> {
  const { store, clock } = u.ctx.deps;
  const ref: IdempotencyKeyRef = { scope: 'http', client: u.client, key: u.key };
  const record = (response: IdempotentResponse) => store.finishIdempotencyKey(ref, response, clock.wallNow());
  return u.ctx.idempotency.gate.run<R | FastifyReply>({ ...ref, fingerprint: u.fingerprint, keepMs: u.ctx.idempotency.keepMs }, {
    first: async (key) => {
      try {
        const response = await u.run(key);
        // Answered only once recorded: a success whose record failed is answered as a failure (and its batch aborted).
        await record({ status: 200, body: JSON.stringify(response) });
        return response;
      } catch (e) {
        // Best effort: a key left pending is taken over by its repeat (below).
        if (u.committed()) await record(errorResponseOf(u.request, e)).catch(() => false);
        throw e;
      }
    },
    replay: (found) => {
      if (found.response === null) throw new SmppdError(ErrorCode.INTERNAL, 'a sendbulk idempotency key done without its response');
      return sendRecorded(u.reply, found.response);
    },
    orphaned: async (found) => {
      if (found.batchId !== null) await u.abort(found.batchId, 'the upload with this Idempotency-Key stopped part way');
      const batch = found.batchId === null ? 'no batch' : `its batch ${found.batchId} (bulkSessionId) is aborted, and what of it was sent stays sent`;
      const response = errorResponseOf(u.request, new ApiError('INTERNAL',
        `the upload with this Idempotency-Key stopped part way (smppd stopped, or could not store the rest): ${batch}; send the rest with a new key`));
      if (await record(response)) return sendRecorded(u.reply, response);
      // Another repeat (on another instance) recorded its answer first: that one.
      const now = await store.findIdempotencyKey(ref, clock.wallNow());
      return sendRecorded(u.reply, now?.response ?? response);
    },
  });
}
