/**
 * The bind that opens a session (SMPP v3.4 §4.1): the bind PDU, encoded before a socket is opened
 * so that settings it cannot carry fail first, and the wait for its response.
 */
import type { Clock } from '../core/clock.js';
import { ErrorCode, SmppdError } from '../core/errors.js';
import { Status, statusName } from './command-status.js';
import type { Connection } from './connection.js';
import { INTERFACE_VERSION_34, type BindCommand } from './pdu.js';
import { encodePdu } from './wire.js';

export type BindMode = 'transceiver' | 'transmitter' | 'receiver';

/** Who binds, and how: the fields of the bind PDU. */
export interface BindIdentity {
  systemId: string;
  password: string;
  systemType: string;
  bindMode: BindMode;
  addressRange: string;
  addrTon: number;
  addrNpi: number;
}

const BIND_COMMAND: Record<BindMode, BindCommand> = {
  transceiver: 'bind_transceiver',
  transmitter: 'bind_transmitter',
  receiver: 'bind_receiver',
};

/** The bind response was not ESME_ROK. */
export class BindRejectedError extends SmppdError {
  constructor(readonly commandStatus: number) {
    super(ErrorCode.BIND_FAILED, `bind rejected: ${statusName(commandStatus)}`, { commandStatus });
  }
}

export class BindHandshake {
  readonly #seq: number;
  readonly #bytes: Buffer;
  #answered: ((status: number) => void) | undefined;
  #closed: ((reason: string) => void) | undefined;

  /** Encodes the bind under `seq`. Throws SmppdError PDU_FIELD_INVALID when `identity` does not fit a bind PDU. */
  constructor(identity: BindIdentity, seq: number) {
    this.#seq = seq;
    this.#bytes = encodePdu({
      command: BIND_COMMAND[identity.bindMode], commandStatus: 0, sequenceNumber: seq,
      systemId: identity.systemId, password: identity.password, systemType: identity.systemType,
      interfaceVersion: INTERFACE_VERSION_34, addrTon: identity.addrTon, addrNpi: identity.addrNpi, addressRange: identity.addressRange,
    });
  }

  /**
   * Writes the bind on `conn` and resolves once it is answered ESME_ROK. Rejects with
   * BindRejectedError (after closing the link), or CONNECTION_CLOSED when the link closes first, or no
   * answer comes within `timeoutMs`.
   */
  async run(conn: Pick<Connection, 'sendBytes' | 'close'>, clock: Clock, timeoutMs: number): Promise<void> {
    let closedWith: string | undefined;
    const status = await new Promise<number>((resolve, reject) => {
      const timer = clock.setTimer(timeoutMs, () => {
        conn.close('no bind response');
        reject(new SmppdError(ErrorCode.CONNECTION_CLOSED, `no bind response within ${timeoutMs} ms`));
      });
      this.#answered = (st) => { timer.cancel(); resolve(st); };
      this.#closed = (reason) => {
        closedWith = reason;
        timer.cancel();
        reject(new SmppdError(ErrorCode.CONNECTION_CLOSED, reason));
      };
      conn.sendBytes(this.#bytes);
    });
    this.#closed = undefined;
    if (status !== Status.ROK) {
      conn.close('bind rejected');
      throw new BindRejectedError(status);
    }
    // The bind response and the end of the link can come in one read (bind_resp then unbind, or a
    // bad command_length): the response settled the wait, the close came before this ran. Bound
    // on a closed link, the bind would wait for a close that has already happened.
    if (closedWith !== undefined) throw new SmppdError(ErrorCode.CONNECTION_CLOSED, `${closedWith} (right after the bind response)`);
  }

  /**
   * A bind response, or a generic_nack, under `seq`: true when it answers the bind (a repeat after
   * the first answer changes nothing).
   */
  answer(seq: number, status: number): boolean {
    if (seq !== this.#seq) return false;
    this.#answered?.(status);
    return true;
  }

  /** The link closed: a bind still waiting fails. */
  linkClosed(reason: string): void {
    this.#closed?.(reason);
  }
}
