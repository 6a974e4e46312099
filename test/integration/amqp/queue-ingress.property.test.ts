/**
 * Property, against a real RabbitMQ (SMPPD_TEST_AMQP_URL): whatever body is published to the send
 * queue (any JSON value, valid send requests with hostile mutations, bytes that are not JSON,
 * bodies over amqp.maxMessageBytes), each message ends exactly once as either accepted (stored as
 * the fields it meant, acked) or dead-lettered with the five-field error; never a crash, never a
 * requeue (a message that comes back again and again), never a message left behind.
 *
 * Seeded: SMPPD_PROPERTY_SEED replays a failure (fast-check prints the seed and path of one).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ERRORS } from '../../../src/api/errors.js';
import { ERROR_CODE_HEADER, ERROR_HEADER } from '../../../src/ingress/amqp/queue-ingress.js';
import { REFUSAL_MESSAGE_MAX } from '../../../src/ingress/amqp/send-message.js';
import { ERROR_FIELDS, TOKENS } from '../../support/http.js';
import { AMQP_URL, noteSkipped, until, uniqueName } from './broker.js';
import { ingressHarness, type Cleanups, type IngressHarness } from './ingress-harness.js';

noteSkipped('queue ingress property (test/integration/amqp/queue-ingress.property.test.ts)');

const SEED = Number(process.env.SMPPD_PROPERTY_SEED ?? 0x22_05_21);
/** Batches of 1–8 bodies (about 450 messages): some 10 s on a loaded 2-core machine. */
const RUNS = 100;
/** amqp.maxMessageBytes: above RabbitMQ's frame_max (128 KiB), so that a refusal quoting the body could not be a header. */
const MAX_BYTES = 256 * 1024;

const FIELDS = [
  'senderId', 'destinationNumber', 'message', 'messageType', 'client', 'reference', 'campaignName', 'expiryHour', 'isSchedule', 'time', 'gmt',
  'repeat', 'delay', 'charCount', 'smsParts', 'charLimit', 'peId', 'templateId', 'telemarketerId',
] as const;

/** Characters that break naive code: NUL, lone surrogates, a bidi override, a GSM extension, non-GSM text, a long digit run. */
const hostileChar = fc.oneof(
  fc.constantFrom('\u0000', '\ud800', '\udfff', '\u202e', '€', '{', '"', '\\', 'é', 'Ж', '😀', '\u00a0', '\r\n', '%s'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
);
const hostileString = fc.oneof(
  fc.string({ unit: hostileChar, maxLength: 40 }),
  fc.nat({ max: MAX_BYTES + 4096 }).map((n) => 'x'.repeat(n)), // up to past the message limit
  fc.constantFrom('', ' ', '447700900123\u0000', 'MyBrand\u0000\u0001\u0001', '+447700900123', '00447700900123', 'app', 'limited', 'other', 'nobody'),
);
const hugeNumber = fc.constantFrom(1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, -0, 2 ** 53, 5e-324, 1.5, -1, 0, 1e21);
const wrongType = fc.oneof(fc.boolean(), fc.constant(null), fc.integer(), fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }));

const validBody = fc.record({
  senderId: fc.constantFrom('MyBrand', 'Shop', '447700900000'),
  destinationNumber: fc.constantFrom('447700900123', '14155550100', '919876543210'),
  message: fc.oneof(fc.string({ minLength: 1, maxLength: 300 }), fc.constantFrom('Hello', 'Привет', 'a€b{c}', 'x'.repeat(1000))),
  messageType: fc.constantFrom('TEXT', 'UNICODE'),
  client: fc.constantFrom('app', 'limited', undefined),
  reference: fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
  campaignName: fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
  expiryHour: fc.option(fc.integer({ min: 1, max: 48 }), { nil: undefined }),
}, { requiredKeys: ['senderId', 'destinationNumber', 'message', 'messageType'] });

type Mutation = { kind: 'set'; field: string; value: unknown } | { kind: 'drop'; field: string } | { kind: 'add'; key: string; value: unknown };
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), field: fc.constantFrom(...FIELDS), value: fc.oneof(hostileString, hugeNumber, wrongType) }),
  fc.record({ kind: fc.constant('drop' as const), field: fc.constantFrom(...FIELDS) }),
  fc.record({
    kind: fc.constant('add' as const),
    // Long keys: an unknown field is named in the refusal, which travels in a header of the dead letter.
    key: fc.oneof(fc.string({ unit: hostileChar, maxLength: 20 }), fc.nat({ max: 3000 }).map((n) => `k${'y'.repeat(n)}`), fc.nat({ max: MAX_BYTES }).map((n) => `K${'z'.repeat(n)}`)),
    value: fc.jsonValue({ maxDepth: 1 }),
  }),
);

function mutate(body: Record<string, unknown>, mutations: Mutation[]): Record<string, unknown> {
  const out: Record<string, unknown> = { ...body };
  for (const m of mutations) {
    if (m.kind === 'set') out[m.field] = m.value;
    else if (m.kind === 'drop') delete out[m.field];
    else out[m.key] = m.value;
  }
  return out;
}

/** A body as published: its bytes, and the JSON it was made from (absent for bytes that are not JSON). */
interface Published {
  content: Buffer;
  json?: unknown;
}
/** How a counterexample prints: a body of 250 KiB would fill the screen. */
function published(content: Buffer, json?: unknown): Published {
  const text = content.toString('utf8');
  const shown = text.length > 300 ? `${text.slice(0, 300)}… (${content.length} bytes)` : text;
  return { content, ...(json !== undefined ? { json } : {}), [fc.toStringMethod]: () => JSON.stringify(shown) } as Published;
}
const asJson = (json: unknown): Published => published(Buffer.from(JSON.stringify(json) ?? 'null'), json);
const body: fc.Arbitrary<Published> = fc.oneof(
  { weight: 2, arbitrary: validBody.map(asJson) },
  { weight: 5, arbitrary: fc.tuple(validBody, fc.array(mutation, { minLength: 1, maxLength: 3 })).map(([b, m]) => asJson(mutate(b, m))) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map(asJson) },
  { weight: 1, arbitrary: fc.array(fc.tuple(fc.constantFrom(...FIELDS), fc.jsonValue({ maxDepth: 1 })), { maxLength: 6 }).map((pairs) => asJson(Object.fromEntries(pairs))) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => published(Buffer.from(bytes))) },
);

/** One outcome, from the reply (`replyTo`) and the dead-letter queue. */
interface Outcome {
  replies: Array<Record<string, unknown>>;
  dead: Array<{ headers: Record<string, unknown>; content: Buffer }>;
}

const cleanups: Cleanups = [];
let h: IngressHarness;
let replies: string;
const outcomes = new Map<string, Outcome>();
const outcome = (id: string): Outcome => {
  let o = outcomes.get(id);
  if (!o) outcomes.set(id, o = { replies: [], dead: [] });
  return o;
};

describe.skipIf(!AMQP_URL)('the queue ingress takes any body (property, RabbitMQ)', () => {
  beforeAll(async () => {
    h = await ingressHarness(cleanups, {
      prefetch: 50, maxMessageBytes: MAX_BYTES,
      clients: [
        { name: 'app', token: TOKENS.app },
        // Limited, so that messages past the limit are set aside and come back through the wait queue.
        { name: 'limited', token: TOKENS.limited, rateLimit: { perSecond: 20, burst: 1 } },
        { name: 'other', token: TOKENS.other },
      ],
      access: { clients: ['app', 'limited'], client: 'app' },
    });
    await until(() => h.ingress.connected, 10_000, 'the consumer (which declares the queues)');
    replies = h.view.ownQueue(uniqueName('replies'));
    await h.view.channel.assertQueue(replies, { durable: false });
    await h.view.channel.consume(replies, (m) => {
      if (m) outcome(String(m.properties.correlationId)).replies.push(JSON.parse(m.content.toString()) as Record<string, unknown>);
    }, { noAck: true });
    await h.view.channel.consume(h.deadQueue, (m) => {
      if (m) outcome(String(m.properties.messageId)).dead.push({ headers: m.properties.headers ?? {}, content: m.content });
    }, { noAck: true });
  }, 30_000);
  afterAll(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('each message is accepted as it meant, or dead-lettered with the five fields; none crashes, comes back or stays', async () => {
    let seq = 0;
    await fc.assert(fc.asyncProperty(fc.array(body, { minLength: 1, maxLength: 8 }), async (bodies) => {
      const ids = bodies.map(() => `p-${++seq}`);
      bodies.forEach((b, i) => h.view.channel.sendToQueue(h.queue, b.content, { messageId: ids[i], replyTo: replies, contentType: 'application/json' }));
      await until(() => ids.every((id) => (outcomes.get(id)?.replies.length ?? 0) >= 1), 20_000, 'a reply to every message');
      await until(() => h.ingress.inFlight === 0, 10_000, 'nothing in flight');
      for (const [i, id] of ids.entries()) {
        const { replies: got, dead } = outcome(id);
        expect(got, id).toHaveLength(1);
        const reply = got[0]!;
        const sent = bodies[i]!;
        if ('messageId' in reply) {
          expect(dead, `${id} accepted and dead`).toEqual([]);
          const json = sent.json as Record<string, unknown>;
          const stored = await h.store.getMessage(String(reply.messageId));
          expect(stored, id).toMatchObject({ client: json.client ?? 'app', source: json.senderId, destination: json.destinationNumber });
        } else {
          const error = reply.error as Record<string, unknown>;
          expect(Object.keys(error), id).toEqual(ERROR_FIELDS);
          expect(error.status, id).toBe(API_ERRORS[error.errorCode as keyof typeof API_ERRORS]);
          expect(error.status as number, id).toBeGreaterThanOrEqual(400);
          expect(error.status as number, id).toBeLessThan(500);
          expect(error.requestUri).toBe(`amqp://${h.queue}`);
          expect(String(error.message).length).toBeLessThanOrEqual(REFUSAL_MESSAGE_MAX);
          await until(() => outcome(id).dead.length >= 1, 10_000, `the dead letter of ${id}`);
          expect(dead, id).toHaveLength(1);
          expect(JSON.parse(String(dead[0]!.headers[ERROR_HEADER]))).toEqual(error);
          expect(dead[0]!.headers[ERROR_CODE_HEADER]).toBe(error.errorCode);
          expect(dead[0]!.content.equals(sent.content), `${id}: the body kept`).toBe(true);
        }
      }
      expect(h.settled.requeued).toBe(0);
      expect(h.events('amqp_internal_error') + h.events('amqp_dead_letter_failed') + h.events('amqp_set_aside_failed') + h.events('amqp_unavailable')).toBe(0);
    }), { seed: SEED, numRuns: RUNS, endOnFailure: true });
    await until(async () => (await h.view.ready(h.queue)) === 0, 10_000, 'the send queue to be empty');
    expect(await h.view.ready(h.waitQueue('limited'))).toBe(0);
    expect(h.settled.accepted + h.settled.dead).toBe(seq);
    // Both ends of the property, and the wait queue, were reached.
    expect(Math.min(h.settled.accepted, h.settled.dead, h.settled.waiting)).toBeGreaterThan(0);
  }, 120_000);
});
