/**
 * Server-side prepared statements for the queries Sluice repeats on PostgreSQL.
 *
 * A statement sent without a name is parsed and planned by its backend every time. The
 * hot ones repeat verbatim (the usage commit's statement for a given number of records,
 * the balance read, the key lookup: Kysely compiles them to the same text every time),
 * and for them the parse and plan is most of the backend's work (bench/RESULTS-archive.md has the
 * usage commit's backend CPU both ways).
 *
 * Why this file and not a library: `pg` prepares a statement only when the query names
 * it, and Kysely's driver passes the text alone, with no hook to add a name. So each
 * pooled connection's `query` names a parameterised data statement (select, insert,
 * update, delete, with) the second time its text is seen; `pg` then parses it once per
 * connection and reuses it. Statements seen once are never named, and at most
 * MAX_NAMED texts are, so a connection's prepared statements stay bounded.
 *
 * A prepared plan goes stale when a migration (another replica's, during a rolling
 * deploy) changes what a `select *` returns: PostgreSQL refuses it with 0A000 "cached
 * plan must not change result type". That text is then never named again, and a statement
 * outside a transaction is run again unnamed, so its caller never sees the error; inside
 * a transaction the error stands (the transaction has failed anyway) and the retry is
 * the caller's, as for any failed transaction.
 *
 * A statement the server no longer holds (26000 "prepared statement … does not exist":
 * a pooler that resets or swaps server connections under the client, or `DISCARD ALL`)
 * means prepared statements do not survive on this path: nothing is named from then on,
 * and the failed statement is handled as a stale plan is.
 *
 * Off (`database_prepared_statements: false`) for a connection pooler in transaction
 * mode that does not carry prepared statements across server connections.
 */
import pg from 'pg';
import { codeOf, type Query } from './pg-query.js';
import { refuseUnstorableText } from './unstorable-text.js';

/** At most this many distinct texts are named (each connection prepares those it runs). */
const MAX_NAMED = 256;
/** Texts seen once are counted up to this many; the count starts over when it is full. */
const MAX_COUNTED = 2048;

const DATA_STATEMENT = /^\s*(select|insert|update|delete|with)\s/i;

export class StatementNames {
  readonly #names = new Map<string, string>();
  readonly #seenOnce = new Set<string>();
  readonly #refused = new Set<string>();
  /** Set when the server lost a named statement: nothing is named any more. */
  #stopped = false;
  /** Names are never reused: a connection may still hold a refused text's statement under its name. */
  #issued = 0;

  /** The name `text` runs under, if it is to be prepared: a parameterised data statement seen before. */
  nameOf(text: string): string | undefined {
    const named = this.#names.get(text);
    if (named !== undefined || this.#issued >= MAX_NAMED || this.#stopped) return named;
    if (!text.includes('$1') || !DATA_STATEMENT.test(text) || this.#refused.has(text)) return undefined;
    if (!this.#seenOnce.has(text)) {
      if (this.#seenOnce.size >= MAX_COUNTED) this.#seenOnce.clear();
      this.#seenOnce.add(text);
      return undefined;
    }
    this.#seenOnce.delete(text);
    const name = `sluice_${++this.#issued}`;
    this.#names.set(text, name);
    return name;
  }

  /** `text` is run unnamed from now on (its prepared plan went stale). */
  refuse(text: string): void {
    this.#names.delete(text);
    this.#refused.add(text);
  }

  /** Every text is run unnamed from now on (the server does not keep what was prepared). */
  stop(): void {
    this.#stopped = true;
    this.#names.clear();
    this.#seenOnce.clear();
  }
}

/** PostgreSQL's refusal of a prepared plan whose result columns changed since it was prepared. */
const STALE_PLAN = '0A000';
/** PostgreSQL's answer to a statement name its session does not hold. */
const UNKNOWN_STATEMENT = '26000';

/**
 * Makes `client` name the statements `names` gives a name to. Only Kysely's form of a
 * query (text and values, promise answer) is named; every other form passes through.
 */
function prepareRepeated(client: pg.PoolClient, names: StatementNames): void {
  const plain = client.query.bind(client) as Query;
  const named = async (text: string, values: unknown[], name: string): Promise<unknown> => {
    try {
      return await plain({ name, text, values });
    } catch (err) {
      const code = codeOf(err);
      if (code === UNKNOWN_STATEMENT) names.stop();
      else if (code === STALE_PLAN) names.refuse(text);
      else throw err;
      if (client.getTransactionStatus() !== 'I') throw err;
      return plain(text, values);
    }
  };
  const query: Query = (config, values, callback) => {
    if (typeof config === 'string' && Array.isArray(values) && callback === undefined) {
      const name = names.nameOf(config);
      if (name !== undefined) return named(config, values, name);
    }
    return plain(config, values, callback);
  };
  (client as unknown as { query: Query }).query = query;
}

/**
 * A pool whose connections prepare the statements they repeat, unless `preparedStatements`
 * is false, and answer text PostgreSQL cannot hold as the caller's bad input (unstorable-text.ts).
 */
export function postgresPool(url: string, options: { max: number; preparedStatements: boolean }): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: options.max });
  if (options.preparedStatements) {
    const names = new StatementNames();
    pool.on('connect', (client) => prepareRepeated(client, names));
  }
  // After the naming, so the refusal wraps it: a retried statement's own refusal is mapped too.
  pool.on('connect', refuseUnstorableText);
  return pool;
}
