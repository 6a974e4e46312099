/**
 * Which client an inbound (MO) message belongs to: the client that lists its destination in
 * `inboundNumbers`, else the upstream's `inboundClient`, else none (stored, no event). SMSCs
 * write the destination with or without `+` or `00`; numbers in the config are digits only.
 */
export interface InboundRoute {
  client: string | null;
  /** The client has a webhook: the message becomes an inbound event. */
  events: boolean;
}

export interface InboundRoutingClient {
  name: string;
  inboundNumbers?: readonly string[];
  hasWebhook: boolean;
}

export class InboundRouting {
  readonly #byNumber = new Map<string, string>();
  readonly #byUpstream = new Map<string, string>();
  readonly #withWebhook = new Set<string>();

  constructor(clients: readonly InboundRoutingClient[], upstreams: ReadonlyArray<{ name: string; inboundClient?: string }>) {
    for (const c of clients) {
      for (const n of c.inboundNumbers ?? []) this.#byNumber.set(n, c.name);
      if (c.hasWebhook) this.#withWebhook.add(c.name);
    }
    for (const u of upstreams) if (u.inboundClient !== undefined) this.#byUpstream.set(u.name, u.inboundClient);
  }

  route(upstream: string, destination: string): InboundRoute {
    const digits = destination.replace(/\D/g, '');
    const client = this.#byNumber.get(digits)
      ?? (digits.startsWith('00') ? this.#byNumber.get(digits.slice(2)) : undefined)
      ?? this.#byUpstream.get(upstream)
      ?? null;
    return { client, events: client !== null && this.#withWebhook.has(client) };
  }
}
