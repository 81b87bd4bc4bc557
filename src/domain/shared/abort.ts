/**
 * Cheap abort listeners for long-lived signals. A client-disconnect signal lives as long
 * as its connection and sees one listener come and go per request; Node's EventTarget
 * makes each add and remove cost about a microsecond, so per signal one real listener
 * fans out to a Set, where adding and removing cost next to nothing.
 */
const listeners = new WeakMap<AbortSignal, Set<(reason: unknown) => void>>();

const NOTHING_TO_REMOVE = () => {};

/**
 * Calls `listener` once when `signal` aborts (at once if it already has); returns the
 * function that removes it, to be called when the work it would stop has ended.
 */
export function onAbort(signal: AbortSignal, listener: (reason: unknown) => void): () => void {
  if (signal.aborted) {
    listener(signal.reason);
    return NOTHING_TO_REMOVE;
  }
  let set = listeners.get(signal);
  if (!set) {
    const created = new Set<(reason: unknown) => void>();
    listeners.set(signal, (set = created));
    signal.addEventListener(
      'abort',
      () => {
        for (const fn of created) fn(signal.reason);
        created.clear();
      },
      { once: true },
    );
  }
  set.add(listener);
  return () => void set.delete(listener);
}
