// The `smpp` package ships no types. This declares only the codec surface that wire.ts uses.
declare module 'smpp' {
  export interface CodecType {
    read(buffer: Buffer, offset: number, length?: number): unknown;
    write(value: unknown, buffer: Buffer, offset: number): void;
    size(value: unknown): number;
    default?: unknown;
  }
  export interface ParamDef {
    type: CodecType;
    filter?: unknown;
    default?: unknown;
  }
  export interface CommandDef {
    id: number;
    command: string;
    params?: Record<string, ParamDef>;
    tlvMap?: Record<string, string>;
  }
  export interface TlvDef {
    id: number;
    tag: string;
    type: CodecType;
    filter?: unknown;
    multiple?: boolean;
  }
  export class PDU {
    constructor(command: string | Buffer, options?: Record<string, unknown>);
    [field: string]: unknown;
    command: string;
    command_id: number;
    command_status: number;
    sequence_number: number;
    toBuffer(): Buffer;
    static maxLength: number;
  }
  export const commands: Record<string, CommandDef>;
  export const commandsById: Record<number, CommandDef>;
  export const tlvs: Record<string, TlvDef>;
  export const tlvsById: Record<number, TlvDef>;
  export const types: { tlv: Record<string, CodecType> } & Record<string, CodecType>;

  const smpp: {
    PDU: typeof PDU;
    commands: typeof commands;
    commandsById: typeof commandsById;
    tlvs: typeof tlvs;
    tlvsById: typeof tlvsById;
    types: typeof types;

  };
  export default smpp;
}
