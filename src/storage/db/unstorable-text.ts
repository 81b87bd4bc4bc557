/**
 * PostgreSQL cannot hold the NUL character (U+0000) in text or jsonb, and refuses a
 * statement that carries one in a parameter: 22021 "invalid byte sequence for encoding
 * "UTF8": 0x00" for text, 22P05 "unsupported Unicode escape sequence" for jsonb. `pg`
 * sends every JavaScript string as valid UTF-8, so NUL is the only way to get either, and
 * such a value comes from a caller (an id in a path, a cursor, a name, a body's text):
 * the refusal is the caller's bad input (400 in the envelope), not a server fault. SQLite
 * stores NUL, so only PostgreSQL's connections need this.
 */
import type pg from 'pg';
import { invalidRequest } from '../../domain/shared/errors.js';
import { codeOf, type Query } from './pg-query.js';

const NUL_REFUSALS: ReadonlySet<string> = new Set(['22021', '22P05']);

const refusalOf = (err: unknown): unknown =>
  NUL_REFUSALS.has(codeOf(err) as string)
    ? invalidRequest('Text containing the NUL character (\\u0000) is not accepted', null, 'invalid_text')
    : err;

/** Makes `client`'s promise-form queries answer a NUL refusal as the caller's invalid request. */
export function refuseUnstorableText(client: pg.PoolClient): void {
  const query = client.query.bind(client) as Query;
  const refusing: Query = (config, values, callback) => {
    const answer = query(config, values, callback);
    return answer instanceof Promise ? answer.catch((err: unknown) => Promise.reject(refusalOf(err))) : answer;
  };
  (client as unknown as { query: Query }).query = refusing;
}
