/**
 * An object seen through a Proxy with some of its methods replaced, for the tracing
 * decorators. A Proxy rather than a prototype copy: every other method must run with the
 * object itself as `this` (backends and adapters keep their state in private fields), and
 * `instanceof` must still see the object's class.
 */
export function withMethods<T extends object>(target: T, replaced: ReadonlyMap<PropertyKey, unknown>): T {
  const methods = new Map(replaced);
  return new Proxy(target, {
    get(object, property) {
      const known = methods.get(property);
      if (known !== undefined) return known;
      const value: unknown = Reflect.get(object, property, object);
      if (typeof value !== 'function') return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(object);
      methods.set(property, bound);
      return bound;
    },
  });
}
