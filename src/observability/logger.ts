import { pino, type DestinationStream, type Logger } from 'pino';
import type { Log } from '../core/log.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/**
 * Keys whose values never reach a log line, wherever they sit in a logged object. pino's
 * redaction works on paths, so each secret key is listed at the depths smppd logs them.
 */
// url: a store or broker URL holds a password (smppd logs the origin of a URL, never the URL).
const SECRET_KEYS = ['password', 'passwordFile', 'token', 'tokenFile', 'secret', 'secretFile', 'authorization', 'url', 'urlFile'];
// The deepest is a whole config logged under a key: `config.clients[0].webhook.secret`.
const REDACT_PATHS = SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`, `*[*].${k}`, `*.*[*].${k}`, `*.*[*].*.${k}`]);

/** JSON lines to stdout (journald and Docker collect them), secrets redacted. */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'smppd' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/**
 * Writes every line logged so far before it returns: for the last lines before `process.exit`
 * (the default destination writes asynchronously, and an exit drops what it still holds). Never
 * throws: a destination that is gone cannot be helped.
 */
export function flushLogSync(logger: Logger): void {
  const stream = (logger as unknown as Record<symbol, { flushSync?: () => void } | undefined>)[pino.symbols.streamSym];
  try {
    stream?.flushSync?.();
  } catch {
    // Not open yet, closed, or stdout gone: nothing more can be written.
  }
}

/** pino's Logger as the narrow `Log` the lower floors take. */
export function asLog(logger: Logger): Log {
  return {
    error: (f, m) => logger.error(f, m),
    warn: (f, m) => logger.warn(f, m),
    info: (f, m) => logger.info(f, m),
    debug: (f, m) => logger.debug(f, m),
    child: (f) => asLog(logger.child(f)),
  };
}
