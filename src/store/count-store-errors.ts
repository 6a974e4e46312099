/**
 * A store that tells of each of its calls that failed (`smppd_store_errors_total`): the same
 * object seen through a proxy, each method's rejection (or throw) reported by the method's name
 * and passed on unchanged. A refusal that is an answer (an idempotency key in use, a batch not
 * found, a state change not allowed) is no store error; what the store could not do is (INTERNAL,
 * or an error that is no SmppdError).
 */
import { ErrorCode, isSmppdError } from '../core/errors.js';

type Method = (...args: unknown[]) => unknown;

function isFailure(e: unknown): boolean {
  return !isSmppdError(e) || e.code === ErrorCode.INTERNAL;
}

/** `store`, with `onError(method)` called for each call that fails. */
export function countStoreErrors<S extends object>(store: S, onError: (operation: string) => void): S {
  const wrapped = new Map<string, Method>();
  const report = (operation: string, e: unknown): never => {
    if (isFailure(e)) onError(operation);
    throw e;
  };
  return new Proxy(store, {
    get(target, key) {
      // The target as receiver: its methods and getters read private fields.
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function' || typeof key !== 'string') return value;
      let method = wrapped.get(key);
      if (method === undefined) {
        const original = value as Method;
        method = (...args: unknown[]): unknown => {
          let result: unknown;
          try {
            result = original.apply(target, args);
          } catch (e) {
            return report(key, e);
          }
          return result instanceof Promise ? result.catch((e: unknown) => report(key, e)) : result;
        };
        wrapped.set(key, method);
      }
      return method;
    },
  });
}
