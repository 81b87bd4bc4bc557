/**
 * A service that one part of the composition calls and another, built later, provides:
 * the core's POST /v1/responses (mounted on /v1 and the gateway with the other wire
 * routes) answers through the responses feature's stored-responses service, which stores,
 * continues and queues. Scopes are mounted, and requests served, only after every feature
 * is assembled, so the binding is always in place by then.
 */
export interface LateBinding<T> {
  /** The bound value; reading it before `bind` is a composition fault. */
  readonly value: T;
  bind(value: T): void;
}

export function lateBinding<T>(name: string): LateBinding<T> {
  let bound: T | null = null;
  return {
    get value(): T {
      if (bound === null) throw new Error(`${name} was used before a feature bound it`);
      return bound;
    },
    bind(value) {
      if (bound !== null) throw new Error(`${name} is bound twice`);
      bound = value;
    },
  };
}
