/** How a refused value is named in a message: "null", "an array", "an object", "a string" (the wire's wording and the domain's own refusals). */
export const describe = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;
