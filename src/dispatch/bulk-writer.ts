/**
 * The numbers of one sendbulk job, stored in committed chunks within the room reserved for them
 * up front (`QueueRoom`): the job is refused whole when its parts do not fit, never half stored.
 */
import type { Clock } from '../core/clock.js';
import { ErrorCode, isSmppdError, SmppdError } from '../core/errors.js';
import type { NewIdempotencyKey } from '../store/idempotency.js';
import type { MessageIntake, NewBatch, NewMessage, NewSchedule } from '../store/intake.js';
import type { QueueRoom, Reservation } from './queue-room.js';

export interface BulkWriterParts {
  store: MessageIntake;
  clock: Clock;
  room: QueueRoom;
  /** The message of one number, routed and composed; throws NO_ROUTE or a compose error. */
  make: (destination: string) => NewMessage;
  /**
   * Parts `destination` becomes at most, over the upstreams of its route; throws NO_ROUTE, or
   * the reason the route's preferred upstream cannot carry the text when none of them can.
   */
  partsOf: (destination: string) => number;
  /** Parts a number becomes at most, over every upstream (the room `reserve` holds without `checkRoutes`). */
  partsPerMessage: number;
  batch: NewBatch;
  /** The job's client, and its schedule if it has one (`SendCommon`'s). */
  common: { client: string; schedule?: Omit<NewSchedule, 'client'> };
  onAccepted: () => void;
  /** After each commit: the messages stored (their route and upstream are counted). */
  onStored?: (messages: readonly NewMessage[]) => void;
}

/** Adds the numbers of one bulk job in committed chunks, within the room it reserved for them. */
export class BulkWriter {
  readonly #o: BulkWriterParts;
  #batchId: number | null = null;
  #scheduleId: number | null = null;
  #count = 0;
  #room: Reservation | undefined;
  #reserved = 0;
  /** The parts the checked numbers make, each by its route (`checkRoutes`). */
  #checkedParts: { numbers: number; parts: number } | undefined;
  #parts = 0;
  #key: NewIdempotencyKey | undefined;

  constructor(o: BulkWriterParts) {
    this.#o = o;
  }

  get batchId(): number | null {
    return this.#batchId;
  }

  get scheduleId(): number | null {
    return this.#scheduleId;
  }

  get count(): number {
    return this.#count;
  }

  /** Parts a number becomes, at most, over every upstream. */
  get partsPerMessage(): number {
    return this.#o.partsPerMessage;
  }

  /**
   * The job's idempotency key, recorded pending with the first chunk (and the batch it makes);
   * its response is recorded at the end by the caller (`IdempotencyKeys.finishIdempotencyKey`).
   * Before the first `add`.
   */
  keyedBy(key: NewIdempotencyKey): void {
    if (this.#batchId !== null) throw new SmppdError(ErrorCode.INTERNAL, 'a bulk job\'s idempotency key goes with its first chunk');
    this.#key = { ...key, pending: true };
  }

  /**
   * Routes every number before anything is stored: throws NO_ROUTE, naming how many and the
   * first, when a route takes none of some of them, or why a route cannot carry the text; the job
   * is refused whole. Else `reserve` holds the parts each number's route makes of the text.
   */
  checkRoutes(chunks: Iterable<readonly string[]>): void {
    let missing = 0;
    let first: string | undefined;
    let numbers = 0;
    let parts = 0;
    for (const chunk of chunks) {
      for (const d of chunk) {
        try {
          parts += this.#o.partsOf(d);
          numbers++;
        } catch (e) {
          if (!isSmppdError(e, ErrorCode.NO_ROUTE)) throw e;
          missing++;
          first ??= d;
        }
      }
    }
    this.#checkedParts = { numbers, parts };
    if (first !== undefined) {
      throw new SmppdError(ErrorCode.NO_ROUTE, `destinationNumberFile: ${missing} number${missing === 1 ? '' : 's'} match no route for this client (the first: ${first}); nothing was stored`);
    }
  }

  /**
   * Holds room for `numbers` messages (their parts) before any is stored, or throws QUEUE_FULL:
   * the job is refused whole. Once only; `add` stores at most that many.
   */
  async reserve(numbers: number): Promise<void> {
    if (this.#room) throw new SmppdError(ErrorCode.INTERNAL, 'a bulk job reserves its room once');
    const checked = this.#checkedParts;
    const parts = checked?.numbers === numbers ? checked.parts : numbers * this.#o.partsPerMessage;
    this.#room = await this.#o.room.reserve(this.#o.common.client, parts);
    this.#reserved = numbers;
    this.#parts = parts;
  }

  /** The parts the job's messages make (each number's by its route): what it costs, once `reserve` ran. */
  get parts(): number {
    return this.#parts;
  }

  /** Stores one chunk of valid, already de-duplicated numbers, within the reserved room. */
  async add(destinations: readonly string[]): Promise<void> {
    const room = this.#room;
    if (!room || this.#count + destinations.length > this.#reserved) {
      throw new SmppdError(ErrorCode.INTERNAL, `a bulk job stores only the numbers it reserved room for (${this.#reserved})`);
    }
    if (destinations.length === 0 && this.#batchId !== null) return;
    const messages = destinations.map((d) => this.#o.make(d));
    const now = this.#o.clock.wallNow();
    if (this.#batchId === null) {
      const s = this.#o.common.schedule;
      const accepted = await this.#o.store.accept({
        messages, now, batch: this.#o.batch, ...(this.#key ? { idempotencyKey: this.#key } : {}),
        ...(s ? { schedule: { client: this.#o.common.client, ...s } } : {}),
      });
      this.#batchId = accepted.batchId;
      this.#scheduleId = accepted.scheduleId;
    } else {
      await this.#o.store.accept({ messages, now, batchId: this.#batchId });
    }
    let parts = 0;
    for (const m of messages) parts += m.parts.length;
    room.stored(parts);
    this.#count += messages.length;
    this.#o.onStored?.(messages);
    this.#o.onAccepted();
  }

  /** Gives back the room of numbers not stored (the job failed or stored fewer). Call once the job is over, whatever its end. */
  close(): void {
    this.#room?.release();
  }
}
