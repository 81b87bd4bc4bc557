/** What the wrappers around a `pg` connection's `query` share (prepared-statements.ts, unstorable-text.ts). */

/** `pg`'s `client.query`, in the forms the wrappers pass through. */
export type Query = (config: unknown, values?: unknown, callback?: unknown) => unknown;

/** A PostgreSQL error's SQLSTATE code (undefined for any other error). */
export const codeOf = (err: unknown): unknown => (err as { code?: unknown } | null)?.code;
