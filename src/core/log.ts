/**
 * The narrow logging surface the lower floors depend on. pino's logger satisfies it; only
 * src/observability/ builds one. Structured fields first, message second (pino's order).
 */
export interface Log {
  error(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
  debug(fields: object, message: string): void;
  child(fields: object): Log;
}

/** A Log that drops everything: for tests and tools that do not care. */
export const silentLog: Log = {
  error: () => {},
  warn: () => {},
  info: () => {},
  debug: () => {},
  child: () => silentLog,
};
