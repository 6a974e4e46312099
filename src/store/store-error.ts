/** What a store's callers see of a failure underneath it (a database error, a lost connection). */
import { ErrorCode, SmppdError, isSmppdError } from '../core/errors.js';

/** SmppdErrors pass through; anything else becomes INTERNAL, `message: its message`, with it as the cause. */
export function asStoreError(e: unknown, message: string, details?: Readonly<Record<string, unknown>>): SmppdError {
  if (isSmppdError(e)) return e;
  const detail = e instanceof Error ? e.message : String(e);
  return new SmppdError(ErrorCode.INTERNAL, `${message}: ${detail}`, details, { cause: e });
}
