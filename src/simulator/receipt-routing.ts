/**
 * Which bind of an account a receipt goes to. An SMSC may send a receipt on any bind of the
 * account (DESIGN.md), so the simulator can do the same, on purpose:
 * - 'same': the bind that submitted, else any receiving bind of the account (round-robin);
 * - 'any': round-robin over the account's receiving binds;
 * - 'other-system-type': round-robin over the receiving binds whose bind came with another
 *   system_type than the submitting bind's (another daemon instance, when each instance sets its
 *   own `upstreams[].systemType`), else as 'same', and the choice says it fell back.
 */
export const RECEIPT_ROUTINGS = ['same', 'any', 'other-system-type'] as const;
export type ReceiptRouting = (typeof RECEIPT_ROUTINGS)[number];

export function isReceiptRouting(value: unknown): value is ReceiptRouting {
  return typeof value === 'string' && (RECEIPT_ROUTINGS as readonly string[]).includes(value);
}

/** A bound connection as routing sees it. */
export interface RoutableBind {
  readonly bindId: number;
  /** The system_type its bind PDU carried ('' when none). */
  readonly systemType: string;
  readonly canReceive: boolean;
}

/** The bind that submitted: where 'same' sends, and whose system_type 'other-system-type' avoids. */
export interface ReceiptOrigin {
  readonly bindId: number;
  readonly systemType: string;
}

export interface RoutingChoice<T> {
  target: T;
  /** 'other-system-type' found no receiving bind with another system_type and routed as 'same'. */
  fellBack: boolean;
}

/** Picks receivers; keeps the round-robin turns (per account, and per system_type for 'other-system-type'). */
export class ReceiptRouter {
  readonly #turns = new Map<string, number>();

  /** A receiving bind among `binds` (the account's bound connections), or undefined when none can receive. */
  pick<T extends RoutableBind>(systemId: string, binds: Iterable<T>, origin: ReceiptOrigin, routing: ReceiptRouting): RoutingChoice<T> | undefined {
    const receivers: T[] = [];
    for (const b of binds) if (b.canReceive) receivers.push(b);
    if (receivers.length === 0) return undefined;
    switch (routing) {
      case 'same':
        return { target: this.#same(systemId, receivers, origin), fellBack: false };
      case 'any':
        return { target: this.#next(systemId, receivers), fellBack: false };
      case 'other-system-type': {
        const others = receivers.filter((b) => b.systemType !== origin.systemType);
        // A turn of its own per submitting system_type: with one shared turn, two instances that
        // take turns submitting would each always get the same bind of the other.
        if (others.length > 0) return { target: this.#next(`${systemId}\u0000${origin.systemType}`, others), fellBack: false };
        return { target: this.#same(systemId, receivers, origin), fellBack: true };
      }
      default: {
        const never: never = routing;
        return never;
      }
    }
  }

  #same<T extends RoutableBind>(systemId: string, receivers: T[], origin: ReceiptOrigin): T {
    return receivers.find((b) => b.bindId === origin.bindId) ?? this.#next(systemId, receivers);
  }

  #next<T>(key: string, receivers: T[]): T {
    const i = this.#turns.get(key) ?? 0;
    this.#turns.set(key, i + 1);
    return receivers[i % receivers.length]!;
  }
}
