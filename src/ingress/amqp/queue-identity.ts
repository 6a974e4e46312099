/**
 * Who a queue message acts as. The operator names the clients a message on the queue may act as
 * (`amqp.clients`); without `amqp.users` the message says which (its `client` field, else
 * `amqp.client`). With `amqp.users` the broker says: RabbitMQ refuses a publish whose `user_id`
 * property is not the publishing connection's user, so a message's user_id names who published
 * it, and the message acts as the client that user is mapped to, whatever its body claims.
 * Pure: what the broker vouches for is an argument.
 */
import { ApiError } from '../../api/errors.js';

/** The operator's rule for one queue (`amqp.clients`, `amqp.client`, `amqp.users`). */
export interface QueueAccess {
  /** The clients a message may act as. */
  allowed: ReadonlySet<string>;
  /** A message that names no client acts as this one (not with users). */
  defaultClient?: string;
  /** RabbitMQ user → client; set: only a mapped user_id decides. */
  users?: ReadonlyMap<string, string>;
}

/** What the broker vouches for about one message. */
export interface Vouched {
  /** Its `user_id` property, which the broker checked against the publisher's connection. */
  userId?: string;
  /**
   * Set for a message smppd itself set aside in a client's wait queue (its user_id is smppd's own
   * user, so no publisher wrote it): the client it was acting as when it was set aside.
   */
  setAsideFor?: string;
}

export function queueAccess(o: { clients: readonly string[]; client?: string; users?: Readonly<Record<string, string>> }): QueueAccess {
  return {
    allowed: new Set(o.clients),
    ...(o.client !== undefined ? { defaultClient: o.client } : {}),
    ...(o.users !== undefined ? { users: new Map(Object.entries(o.users)) } : {}),
  };
}

/**
 * The client the message acts as. Throws CLIENT_NOT_ALLOWED (403) for a client the queue may
 * not act as, or a message whose user_id is not mapped (with users); VALIDATION when it names
 * no client and there is no default. `named`: the body's `client` field.
 */
export function queueClient(access: QueueAccess, named: string | null | undefined, vouched: Vouched): string {
  let name: string;
  if (access.users !== undefined) {
    const { userId, setAsideFor } = vouched;
    const mapped = setAsideFor ?? (userId !== undefined ? access.users.get(userId) : undefined);
    if (mapped === undefined) {
      throw new ApiError('CLIENT_NOT_ALLOWED', userId === undefined
        ? 'this queue takes a message only with its user_id property set to the RabbitMQ user it is published as (amqp.users)'
        : `user_id: RabbitMQ user ${JSON.stringify(userId)} may not publish to this queue (amqp.users maps no client to it)`);
    }
    if (named != null && named !== mapped) {
      throw new ApiError('CLIENT_NOT_ALLOWED', 'client: differs from the client this message\'s user_id stands for (amqp.users); leave client out or name that one');
    }
    name = mapped;
  } else {
    const given = named ?? access.defaultClient;
    if (given === undefined) throw new ApiError('VALIDATION', 'client: is required (amqp.client names no default client)');
    name = given;
  }
  // Neither the name nor the allowed list is quoted: a publisher learns no client names from a refusal.
  if (!access.allowed.has(name)) throw new ApiError('CLIENT_NOT_ALLOWED', 'client: this queue may not send as that client (amqp.clients)');
  return name;
}
