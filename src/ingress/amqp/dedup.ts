/**
 * Queue messages committed once (`amqp.dedupHours`): a message with an id — its AMQP messageId
 * property, else its `reference` — is committed with that id as its client's idempotency key, so
 * one delivered again after its commit (its ack lost with a connection or a crash, a publisher's
 * re-send) is known and not stored again; one with the same id and another body is refused
 * (IDEMPOTENCY_KEY_REUSED). A message without either is stored as it comes.
 */
import type { ConsumeMessage } from '../../amqp/broker-link.js';
import { RequestFingerprint } from '../../api/idempotency-key.js';
import type { Clock } from '../../core/clock.js';
import type { SendOptions, SendRequest } from '../../dispatch/accept.js';
import { IdempotencyGate } from '../../dispatch/idempotency.js';
import type { IdempotencyKeys } from '../../store/idempotency.js';

/** The acceptor's send, as the ingress holds it (`SendAcceptor`). */
interface KeyedSend {
  send(req: SendRequest, options?: SendOptions): Promise<{ messageId: string }>;
}

export class QueueDedup {
  readonly #gate: IdempotencyGate;
  readonly #keepMs: number;

  constructor(keys: Pick<IdempotencyKeys, 'findIdempotencyKey'>, clock: Clock, hours: number) {
    this.#gate = new IdempotencyGate({ store: keys, clock });
    this.#keepMs = hours * 3_600_000;
  }

  /**
   * Sends a message read and valid; resolves after its commit with its message id, or with the id
   * its first delivery was committed with (`again`). Throws what the acceptor throws, and
   * IDEMPOTENCY_KEY_REUSED.
   */
  async send(message: ConsumeMessage, request: SendRequest, reference: string | null, acceptor: KeyedSend): Promise<{ messageId: string; again: boolean }> {
    const id: unknown = message.properties.messageId;
    const key = typeof id === 'string' && id !== '' ? `messageId:${id}` : reference ? `reference:${reference}` : undefined;
    if (key === undefined) return { ...(await acceptor.send(request)), again: false };
    // Read and valid already (readSendMessage): it parses. As JSON, so a re-send laid out otherwise is the same.
    const body: unknown = JSON.parse(message.content.toString('utf8'));
    let again = false;
    const messageId = await this.#gate.run({
      scope: 'amqp', client: request.client, key, keepMs: this.#keepMs, fingerprint: new RequestFingerprint('amqp').json(body).digest(),
    }, {
      first: async (idempotencyKey) => (await acceptor.send(request, { idempotencyKey })).messageId,
      replay: (record) => {
        again = true;
        return record.messageId ?? '';
      },
    });
    return { messageId, again };
  }
}
