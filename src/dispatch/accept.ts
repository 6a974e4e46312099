/**
 * Accepting work from an ingress (HTTP now, AMQP later): a validated send request becomes stored
 * messages whose parts are composed for their upstream, committed before the caller answers. The
 * parts are composed here, once, so a resend after a restart carries the same concatenation
 * reference as the first try. Their number is what the caps on queued parts count (`QueueRoom`):
 * room is held for them before they are stored.
 */
import type { Clock } from '../core/clock.js';
import { ErrorCode, SmppdError } from '../core/errors.js';
import { uuidV7 } from '../core/ids.js';
import type { Log } from '../core/log.js';
import type { ClaimedMessage } from '../store/claims.js';
import type { NewIdempotencyKey } from '../store/idempotency.js';
import type { Accepted, MessageIntake, NewMessage, NewSchedule } from '../store/intake.js';
import type { RegulatoryField, RegulatoryIds } from '../sms/regulatory.js';
import { MAX_VALIDITY_HOURS } from '../sms/smpp-time.js';
import { BulkWriter } from './bulk-writer.js';
import { MessageComposer, partBodies, type ComposedMessage, type ComposeSettings, type OutgoingMessage } from './compose.js';
import type { Admission } from './dispatcher.js';
import { QueueRoom } from './queue-room.js';
import { RouteTable, type RouteSpec } from './route-table.js';
import { noRoutingCounters, Router, type RoutingCounters } from './router.js';

export { BulkWriter } from './bulk-writer.js';

/** What every send names, single or bulk (the provider's sendSms / bulkRequest fields). */
export interface SendCommon {
  client: string;
  senderId: string;
  message: string;
  messageType: 'TEXT' | 'UNICODE';
  /** Validity in whole hours (1 … MAX_VALIDITY_HOURS). */
  expiryHour?: number;
  campaignName?: string;
  /** Scheduled sends wait for this instant (wall ms) or for send-now. */
  schedule?: Omit<NewSchedule, 'client'>;
  /** The registry ids (peId, templateId, telemarketerId), each sent in its upstream's TLV (`regulatoryTlvs`). */
  regulatory?: RegulatoryIds;
}

/** A sendbulk job: the common fields, and the milliseconds between its messages (`delay`). */
export interface BulkCommon extends SendCommon {
  spacingMs?: number | null;
}

export interface SendRequest extends SendCommon {
  destination: string;
}

/** How one send is stored besides its request. */
export interface SendOptions {
  /** Recorded done with the message, in its commit (`IdempotencyGate`'s `first`). */
  idempotencyKey?: NewIdempotencyKey;
}

export interface AcceptorUpstream {
  name: string;
  compose: ComposeSettings;
}

export interface AcceptorOptions {
  store: MessageIntake;
  /** Every upstream a route may name, with how a text is composed for it. */
  upstreams: AcceptorUpstream[];
  /**
   * Where each send goes (`routes`). Default: every upstream, in order, as one failover route for
   * every number, each counted available (so the first takes every send).
   */
  router?: Router;
  /** Messages accepted per route and upstream. */
  counters?: Pick<RoutingCounters, 'routed'>;
  clock: Clock;
  /** Queued parts of all clients, at most: a send that would pass it is refused with QUEUE_FULL (429) (`limits.maxQueued`). */
  maxQueued: number;
  /** Each client's own cap on its queued parts (`clients[].maxQueued`); a client not in it has none. `setClientMaxQueued` replaces it. */
  clientMaxQueued?: ReadonlyMap<string, number>;
  /** Parts a second the upstreams send at most (binds × ratePerBind, summed; 0: no limit), for Retry-After. Default 0. */
  drainPerSecond?: number;
  /** Message ids; time-ordered UUIDs (version 7) by default. */
  newId?: () => string;
  /** Called after each commit of new work the dispatcher has to claim (its wake-up). */
  onAccepted?: () => void;
  /**
   * The dispatcher's `admit`: a single send goes to the pool straight from its accept when the
   * dispatcher has room and the store `claimsOnAccept`. Default: every message is queued.
   */
  admit?: (upstream: string) => Admission;
  /** Whether a client's messages produce status events (it has a webhook). Default: none do. */
  wantsEvents?: (client: string) => boolean;
  /** Where it says, once per upstream, that regulatory ids go to an upstream without their tags. Default: nowhere. */
  log?: Log;
}

export class Acceptor {
  readonly #store: MessageIntake;
  readonly #clock: Clock;
  readonly #room: QueueRoom;
  readonly #newId: () => string;
  readonly #router: Router;
  readonly #composers: ReadonlyMap<string, MessageComposer>;
  readonly #counters: Pick<RoutingCounters, 'routed'>;
  readonly #onAccepted: () => void;
  readonly #wantsEvents: (client: string) => boolean;
  readonly #admit: ((upstream: string) => Admission) | undefined;
  readonly #log: Log | undefined;
  /** Upstreams already named in a `regulatory_fields_not_sent` warning. */
  readonly #unsentSaid = new Set<string>();

  constructor(o: AcceptorOptions) {
    if (o.upstreams.length === 0) throw new SmppdError(ErrorCode.INTERNAL, 'an Acceptor needs at least one upstream');
    this.#store = o.store;
    this.#clock = o.clock;
    this.#room = new QueueRoom({
      readDepth: () => o.store.queueDepth(), clock: o.clock, maxQueued: o.maxQueued,
      ...(o.clientMaxQueued ? { clientMaxQueued: o.clientMaxQueued } : {}), ...(o.drainPerSecond !== undefined ? { drainPerSecond: o.drainPerSecond } : {}),
    });
    this.#newId = o.newId ?? (() => uuidV7(this.#clock.wallNow()));
    // One composer per upstream: each rotates its own concatenation reference.
    this.#composers = new Map(o.upstreams.map((u) => [u.name, new MessageComposer(u.compose)]));
    this.#router = o.router ?? everyUpstreamInOrder(o.upstreams.map((u) => u.name));
    this.#counters = o.counters ?? noRoutingCounters;
    this.#onAccepted = o.onAccepted ?? (() => {});
    this.#wantsEvents = o.wantsEvents ?? (() => false);
    this.#admit = o.store.claimsOnAccept === true ? o.admit : undefined;
    this.#log = o.log;
  }

  /** SIGHUP: each client's cap on its queued parts (`clients[].maxQueued`), from the next request on. */
  setClientMaxQueued(caps: ReadonlyMap<string, number>): void {
    this.#room.setClientMaxQueued(caps);
  }

  /**
   * One message; resolves after the commit with the id to answer. Throws SmppdError on refusal:
   * QUEUE_FULL when its parts would pass a cap on queued parts (`QueueRoom`). `idempotencyKey` is
   * recorded in the same commit (IDEMPOTENCY_KEY_IN_USE, nothing stored, when it is recorded).
   */
  async send(req: SendRequest, options: SendOptions = {}): Promise<{ messageId: string; batchId: number | null }> {
    const key = options.idempotencyKey;
    const route = this.#routeOf(req.destination, req.client);
    // Composed lazily for the upstreams the choice looks at: one that cannot carry the text (its
    // alphabet, its part limit) is passed over for one of the route that can.
    const composed = new Map<string, ComposedMessage | Error>();
    const attempt = (upstream: string): ComposedMessage | Error => {
      let c = composed.get(upstream);
      if (c === undefined) {
        try {
          c = this.#compose(req, upstream);
        } catch (e) {
          c = asError(e);
        }
        composed.set(upstream, c);
      }
      return c;
    };
    const upstream = this.#router.upstreamFor(route, (u) => !(attempt(u) instanceof Error));
    const chosen = attempt(upstream ?? route.upstreams[0]!);
    // None can: the preferred upstream's reason.
    if (chosen instanceof Error) throw chosen;
    const target = { route, upstream: upstream! };
    const message = this.#messageOf(req, req.destination, chosen, target);
    const room = await this.#room.reserve(req.client, message.parts.length);
    const now = this.#clock.wallNow();
    try {
      if (req.schedule === undefined) {
        // Handed to the pool from its accept, it was never queued: its room is given back.
        if (!(await this.#acceptLoose(message, now, key))) room.stored(message.parts.length);
        this.#counters.routed(target.route.name, target.upstream);
        return { messageId: message.id, batchId: null };
      }
      const accepted = await this.#store.accept({
        messages: [message],
        now,
        ...(key ? { idempotencyKey: key } : {}),
        batch: { client: req.client, senderId: req.senderId, reqType: 'single', messageType: message.encoding, campaignName: req.campaignName ?? null },
        schedule: { client: req.client, ...req.schedule },
      });
      room.stored(message.parts.length);
      this.#counters.routed(target.route.name, target.upstream);
      this.#onAccepted();
      return { messageId: message.id, batchId: accepted.batchId };
    } finally {
      room.release();
    }
  }

  /**
   * A message without a batch or a schedule: claimed at its accept and handed over when the
   * dispatcher admits it (true), else queued (false).
   */
  async #acceptLoose(message: NewMessage, now: number, key: NewIdempotencyKey | undefined): Promise<boolean> {
    const admission = this.#admit?.(message.upstream);
    let accepted: Accepted;
    try {
      accepted = await this.#store.accept({
        messages: [message], now, ...(admission?.direct === true ? { claimed: true } : {}), ...(key ? { idempotencyKey: key } : {}),
      });
    } catch (e) {
      admission?.done();
      throw e;
    }
    // The store may have queued it after all (`Accepted.claimed`).
    if (admission?.direct === true && accepted.claimed === true) {
      admission.handOver(claimedOf(message));
      return true;
    }
    admission?.done();
    this.#onAccepted();
    return false;
  }

  /**
   * A bulk job: the text is composed once per upstream the client's routes may take and checked
   * before any number is stored, and the request is refused (QUEUE_FULL) when a cap on queued
   * parts is already reached. Once its numbers are counted, `BulkWriter.reserve` holds room for
   * all their parts or refuses the job whole; they are then added in chunks (`add`), each routed
   * and committed before `add` resolves. The batch exists from the first chunk on. A text of one
   * part is the same bytes for every number of an upstream and is not composed again; a longer
   * one is, for its own concatenation reference (two long messages to one number must not share
   * one), in as many parts.
   */
  async startBulk(common: BulkCommon): Promise<BulkWriter> {
    const probes = new Map<string, ComposedMessage>();
    const refusals = new Map<string, Error>();
    for (const upstream of this.#upstreamsOf(common.client)) {
      try {
        probes.set(upstream, this.#compose(common, upstream));
      } catch (e) {
        refusals.set(upstream, asError(e));
      }
    }
    const sample = probes.values().next().value;
    // Sendable through none of them: the first refusal says why (an upstream's rules, or the text).
    if (sample === undefined) throw refusals.values().next().value ?? new SmppdError(ErrorCode.NO_ROUTE, 'no route applies to this client');
    (await this.#room.reserve(common.client, 0)).release();
    /** A route's upstreams that can carry the text, or the reason its preferred one cannot. */
    const refusalOf = (route: RouteSpec): Error => refusals.get(route.upstreams[0]!) ?? new SmppdError(ErrorCode.INTERNAL, `no composition for route ${route.name}`);
    const make = (destination: string): NewMessage => {
      const route = this.#routeOf(destination, common.client);
      const upstream = this.#router.upstreamFor(route, (u) => probes.has(u));
      const probe = upstream === undefined ? undefined : probes.get(upstream);
      if (upstream === undefined || probe === undefined) throw refusalOf(route);
      return this.#messageOf(common, destination, probe.parts.length === 1 ? probe : this.#compose(common, upstream), { route, upstream });
    };
    // What each route makes of the text at most, over its upstreams that can carry it.
    const partsOfRoute = new Map<RouteSpec, number>();
    const partsOf = (destination: string): number => {
      const route = this.#routeOf(destination, common.client);
      let parts = partsOfRoute.get(route);
      if (parts === undefined) {
        parts = Math.max(0, ...route.upstreams.map((u) => probes.get(u)?.parts.length ?? 0));
        if (parts === 0) throw refusalOf(route);
        partsOfRoute.set(route, parts);
      }
      return parts;
    };
    return new BulkWriter({
      store: this.#store, clock: this.#clock, room: this.#room, make, partsOf,
      partsPerMessage: Math.max(...[...probes.values()].map((p) => p.parts.length)),
      batch: {
        client: common.client, senderId: common.senderId, reqType: 'bulk', messageType: sample.encoding,
        campaignName: common.campaignName ?? null, spacingMs: common.spacingMs ?? null,
      },
      common, onAccepted: this.#onAccepted,
      onStored: (messages) => { for (const m of messages) this.#counters.routed(m.route ?? '', m.upstream); },
    });
  }

  /**
   * `message` composed for `upstream` (a failover moving it there), with the same composer, and
   * so the same rotation of concatenation references, as new sends; throws the compose errors.
   */
  composeFor(upstream: string, message: Omit<OutgoingMessage, 'destination'>): ComposedMessage {
    const composer = this.#composers.get(upstream);
    if (!composer) throw new SmppdError(ErrorCode.INTERNAL, `upstream ${upstream} is not configured`);
    const composed = composer.compose({ ...message, destination: '' });
    this.#sayUnsent(upstream, composed.unsentRegulatory);
    return composed;
  }

  /**
   * Once per upstream: the ids a message gave that its upstream has no tag for go without them.
   * The field names only: the operator learns what to map, and the log keeps no client's ids.
   */
  #sayUnsent(upstream: string, fields: readonly RegulatoryField[]): void {
    if (fields.length === 0 || this.#unsentSaid.has(upstream)) return;
    this.#unsentSaid.add(upstream);
    this.#log?.warn({ event: 'regulatory_fields_not_sent', upstream, fields },
      'messages with regulatory ids go to an upstream without regulatoryTlvs for them: sent without those fields (said once per upstream)');
  }

  /** The route a send of `destination` by `client` takes; throws NO_ROUTE. */
  #routeOf(destination: string, client: string): RouteSpec {
    const route = this.#router.route(destination, client);
    if (!route) throw new SmppdError(ErrorCode.NO_ROUTE, `destinationNumber: no route takes ${destination} for this client`);
    return route;
  }

  /** Every upstream a route that applies to `client` names. */
  #upstreamsOf(client: string): Set<string> {
    const names = new Set<string>();
    for (const r of this.#router.table.routes) {
      if (r.clients === undefined || r.clients.includes(client)) for (const u of r.upstreams) names.add(u);
    }
    return names;
  }

  /** The parts of `req`'s text for `upstream`; throws VALIDATION and the compose errors. */
  #compose(req: SendCommon, upstream: string): ComposedMessage {
    const hours = req.expiryHour;
    if (hours !== undefined && (!Number.isInteger(hours) || hours < 1 || hours > MAX_VALIDITY_HOURS)) {
      throw new SmppdError(ErrorCode.VALIDATION, `expiryHour must be a whole number from 1 to ${MAX_VALIDITY_HOURS}`);
    }
    const composer = this.#composers.get(upstream);
    if (!composer) throw new SmppdError(ErrorCode.INTERNAL, `a route names upstream ${upstream}, which is not configured`);
    // The destination is not part of what is composed: the message carries its own.
    return composer.compose({
      source: req.senderId, destination: '', text: req.message, messageType: req.messageType,
      ...(hours !== undefined ? { validityHours: hours } : {}),
      ...(req.regulatory !== undefined ? { regulatory: req.regulatory } : {}),
    });
  }

  #messageOf(req: SendCommon, destination: string, composed: ComposedMessage, target: Target): NewMessage {
    const hours = req.expiryHour;
    const first = composed.parts[0]!;
    const now = this.#clock.wallNow();
    this.#sayUnsent(target.upstream, composed.unsentRegulatory);
    return {
      id: this.#newId(),
      client: req.client,
      events: this.#wantsEvents(req.client),
      upstream: target.upstream,
      route: target.route.name,
      source: req.senderId,
      destination,
      text: req.message,
      messageType: req.messageType,
      encoding: composed.encoding,
      campaignName: req.campaignName ?? null,
      registeredDelivery: first.registeredDelivery,
      sourceTon: first.sourceAddrTon,
      sourceNpi: first.sourceAddrNpi,
      destTon: first.destAddrTon,
      destNpi: first.destAddrNpi,
      validityPeriod: first.validityPeriod,
      expiresAt: hours === undefined ? null : (req.schedule?.runAt ?? now) + hours * 3_600_000,
      notBefore: null,
      ...(composed.vendorTlvs.length > 0 ? { vendorTlvs: composed.vendorTlvs } : {}),
      ...(req.regulatory !== undefined && Object.keys(req.regulatory).length > 0 ? { regulatory: req.regulatory } : {}),
      parts: partBodies(composed),
    };
  }

}

/** A message as a claim would return it right after its accept: every part, none tried yet. */
export function claimedOf(m: NewMessage): ClaimedMessage {
  return {
    id: m.id, client: m.client, upstream: m.upstream, source: m.source, destination: m.destination, registeredDelivery: m.registeredDelivery,
    sourceTon: m.sourceTon, sourceNpi: m.sourceNpi, destTon: m.destTon, destNpi: m.destNpi, validityPeriod: m.validityPeriod,
    ...(m.vendorTlvs !== undefined && m.vendorTlvs.length > 0 ? { vendorTlvs: m.vendorTlvs } : {}),
    parts: m.parts.map((p, i) => ({ ...p, part: i + 1, attempts: 0 })),
  };
}


function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

interface Target {
  route: RouteSpec;
  upstream: string;
}

/** Without `routes`: every upstream, in file order, one failover route for every number. */
function everyUpstreamInOrder(upstreams: readonly string[]): Router {
  const table = new RouteTable([{ name: 'default', prefixes: [''], upstreams, strategy: 'failover', weights: upstreams.map(() => 1) }]);
  return new Router(table, { available: () => true });
}
