/**
 * SMPP command_status as data (SMPP v3.4 §5.1.3, table 5-2): every code with its name and the
 * class that decides what happens to the part that got it.
 */

/**
 * - ok: accepted.
 * - retry: transient; the same PDU is sent again later (throttling also slows the bind).
 * - reject: permanent for this message (address, length, data_coding, esm_class, …): REJECTED.
 * - fail: the bind or session is at fault, not the message; never retried on this message's account
 *   as a rejection (credential errors stop the bind).
 */
export type StatusClass = 'ok' | 'retry' | 'reject' | 'fail';

export const COMMAND_STATUS = {
  0x00: { name: 'ESME_ROK', class: 'ok' },
  0x01: { name: 'ESME_RINVMSGLEN', class: 'reject' },
  0x02: { name: 'ESME_RINVCMDLEN', class: 'reject' },
  0x03: { name: 'ESME_RINVCMDID', class: 'reject' },
  0x04: { name: 'ESME_RINVBNDSTS', class: 'fail' }, // the SMSC thinks we are not bound: a session problem
  0x05: { name: 'ESME_RALYBND', class: 'fail' },
  0x06: { name: 'ESME_RINVPRTFLG', class: 'reject' },
  0x07: { name: 'ESME_RINVREGDLVFLG', class: 'reject' },
  0x08: { name: 'ESME_RSYSERR', class: 'retry' }, // Kannel and Jasmin retry it
  0x0a: { name: 'ESME_RINVSRCADR', class: 'reject' },
  0x0b: { name: 'ESME_RINVDSTADR', class: 'reject' },
  0x0c: { name: 'ESME_RINVMSGID', class: 'reject' },
  0x0d: { name: 'ESME_RBINDFAIL', class: 'fail' },
  0x0e: { name: 'ESME_RINVPASWD', class: 'fail' }, // stops the bind: never retry bad credentials
  0x0f: { name: 'ESME_RINVSYSID', class: 'fail' }, // stops the bind, as above
  0x11: { name: 'ESME_RCANCELFAIL', class: 'reject' },
  0x13: { name: 'ESME_RREPLACEFAIL', class: 'reject' },
  0x14: { name: 'ESME_RMSGQFUL', class: 'retry' }, // and slows the whole bind
  0x15: { name: 'ESME_RINVSERTYP', class: 'reject' },
  0x33: { name: 'ESME_RINVNUMDESTS', class: 'reject' },
  0x34: { name: 'ESME_RINVDLNAME', class: 'reject' },
  0x40: { name: 'ESME_RINVDESTFLAG', class: 'reject' },
  0x42: { name: 'ESME_RINVSUBREP', class: 'reject' },
  0x43: { name: 'ESME_RINVESMCLASS', class: 'reject' },
  0x44: { name: 'ESME_RCNTSUBDL', class: 'reject' },
  0x45: { name: 'ESME_RSUBMITFAIL', class: 'retry' }, // a generic SMSC-side failure, often transient
  0x48: { name: 'ESME_RINVSRCTON', class: 'reject' },
  0x49: { name: 'ESME_RINVSRCNPI', class: 'reject' },
  0x50: { name: 'ESME_RINVDSTTON', class: 'reject' },
  0x51: { name: 'ESME_RINVDSTNPI', class: 'reject' },
  0x53: { name: 'ESME_RINVSYSTYP', class: 'fail' }, // a bind setting (system_type), not the message
  0x54: { name: 'ESME_RINVREPFLAG', class: 'reject' },
  0x55: { name: 'ESME_RINVNUMMSGS', class: 'reject' },
  0x58: { name: 'ESME_RTHROTTLED', class: 'retry' }, // and slows the whole bind
  0x61: { name: 'ESME_RINVSCHED', class: 'reject' },
  0x62: { name: 'ESME_RINVEXPIRY', class: 'reject' },
  0x63: { name: 'ESME_RINVDFTMSGID', class: 'reject' },
  0x64: { name: 'ESME_RX_T_APPN', class: 'retry' }, // "temporary application error"
  0x65: { name: 'ESME_RX_P_APPN', class: 'reject' }, // "permanent application error"
  0x66: { name: 'ESME_RX_R_APPN', class: 'reject' }, // "reject message"
  0x67: { name: 'ESME_RQUERYFAIL', class: 'reject' },
  0xc0: { name: 'ESME_RINVOPTPARSTREAM', class: 'reject' },
  0xc1: { name: 'ESME_ROPTPARNOTALLWD', class: 'reject' },
  0xc2: { name: 'ESME_RINVPARLEN', class: 'reject' },
  0xc3: { name: 'ESME_RMISSINGOPTPARAM', class: 'reject' },
  0xc4: { name: 'ESME_RINVOPTPARAMVAL', class: 'reject' },
  0xfe: { name: 'ESME_RDELIVERYFAILURE', class: 'retry' }, // "delivery failure (used for data_sm_resp)": transient in practice
  0xff: { name: 'ESME_RUNKNOWNERR', class: 'retry' },
} as const satisfies Record<number, { name: string; class: StatusClass }>;

export type CommandStatusTable = Readonly<Record<number, { name: string; class: StatusClass }>>;

/** The codes the engine refers to by name. */
export const Status = {
  ROK: 0x00, RINVMSGLEN: 0x01, RINVCMDLEN: 0x02, RINVCMDID: 0x03, RINVBNDSTS: 0x04, RALYBND: 0x05,
  RSYSERR: 0x08, RINVDSTADR: 0x0b, RBINDFAIL: 0x0d, RINVPASWD: 0x0e, RINVSYSID: 0x0f,
  RMSGQFUL: 0x14, RTHROTTLED: 0x58, RX_T_APPN: 0x64,
} as const;

/** A bind that gets one of these stops and never reconnects by itself. */
export const CREDENTIAL_ERRORS: ReadonlySet<number> = new Set([Status.RINVPASWD, Status.RINVSYSID]);

/** Answers that slow the whole bind down, not just retry the part. */
export const THROTTLE_ERRORS: ReadonlySet<number> = new Set([Status.RTHROTTLED, Status.RMSGQFUL]);

/** The base table with per-upstream overrides (vendor codes 0x400–0x4FF, or a reclassified standard code). Pure. */
export function buildStatusTable(overrides: Readonly<Record<number, { name?: string; class: StatusClass }>> = {}): CommandStatusTable {
  const table: Record<number, { name: string; class: StatusClass }> = { ...COMMAND_STATUS };
  for (const [code, o] of Object.entries(overrides)) {
    const n = Number(code);
    table[n] = { name: o.name ?? table[n]?.name ?? unknownName(n), class: o.class };
  }
  return table;
}

/**
 * Unknown non-zero codes are rejections: a permanent error never resends (so never duplicates)
 * and never loops; operators reclassify their vendor's transient codes with `commandStatus`.
 */
export function classify(table: CommandStatusTable, status: number): { name: string; class: StatusClass } {
  return table[status] ?? { name: unknownName(status), class: 'reject' };
}

export function statusName(status: number, table: CommandStatusTable = COMMAND_STATUS): string {
  return table[status]?.name ?? unknownName(status);
}

function unknownName(status: number): string {
  return `UNKNOWN_0x${(status >>> 0).toString(16).padStart(8, '0')}`;
}
