/**
 * A query's rows read a page at a time, the query run once: what a report streams when
 * its rows may be many (the spend report by end user). On PostgreSQL, a server-side
 * cursor (DECLARE … FETCH) in a read transaction held while the rows are read; on SQLite,
 * whose one connection serves every other query meanwhile, the result is kept in a
 * temporary table and read from it by rowid, then dropped. Kysely's own `stream()` needs
 * the `pg-cursor` package on PostgreSQL and would hold SQLite's only connection for as
 * long as a slow reader takes, hence this.
 */
import { CompiledQuery, sql } from 'kysely';
import type { Database } from './database.js';
import { randomToken } from '../../domain/shared/ids.js';

/** The rows of `query`, `pageSize` at a time; ending the iteration early releases the cursor or the table. */
export function resultPages<R>(database: Database, query: CompiledQuery<R>, pageSize: number): AsyncGenerator<R[]> {
  return database.flavor === 'postgres' ? cursorPages(database, query, pageSize) : tempTablePages(database, query, pageSize);
}

async function* tempTablePages<R>(database: Database, query: CompiledQuery<R>, pageSize: number): AsyncGenerator<R[]> {
  const table = `result_${randomToken(9).replace(/[^A-Za-z0-9]/g, '_')}`;
  await database.db.executeQuery(CompiledQuery.raw(`create temporary table "${table}" as ${query.sql}`, [...query.parameters]));
  try {
    let after = 0;
    for (;;) {
      const { rows } = await sql<R & { row_no: number }>`select rowid as row_no, * from temp.${sql.table(table)} where rowid > ${after} order by rowid limit ${pageSize}`.execute(database.db);
      if (rows.length > 0) yield rows;
      if (rows.length < pageSize) return;
      after = Number(rows[rows.length - 1]!.row_no);
    }
  } finally {
    await sql`drop table if exists temp.${sql.table(table)}`.execute(database.db);
  }
}

/**
 * The cursor's transaction runs beside the reader: it fetches a page when the reader asks
 * for one and hands it over, and ends (committing nothing) when the rows run out, the
 * reader stops, or a fetch fails (the reader then throws that error).
 */
async function* cursorPages<R>(database: Database, query: CompiledQuery<R>, pageSize: number): AsyncGenerator<R[]> {
  const handoff = new Handoff<R[]>();
  const transaction = database.db
    .transaction()
    .execute(async (trx) => {
      await trx.executeQuery(CompiledQuery.raw(`declare result_cursor no scroll cursor for ${query.sql}`, [...query.parameters]));
      for (;;) {
        if (!(await handoff.wanted())) return;
        const { rows } = await trx.executeQuery<R>(CompiledQuery.raw(`fetch ${pageSize} from result_cursor`) as CompiledQuery<R>);
        handoff.give(rows);
        if (rows.length < pageSize) return;
      }
    })
    .then(
      () => handoff.end(null),
      (err: unknown) => handoff.end(err),
    );
  try {
    for (;;) {
      const page = await handoff.take();
      if (page === null) return;
      if (page.length > 0) yield page;
    }
  } finally {
    handoff.stop();
    await transaction;
  }
}

/** One page at a time from a producer to a reader: the producer waits to be asked. */
class Handoff<T> {
  #ask: ((go: boolean) => void) | null = null;
  #asked: Promise<boolean>;
  #deliver: ((value: T | null) => void) | null = null;
  #fail: ((err: unknown) => void) | null = null;
  #ended = false;
  #endError: unknown = null;
  #stopped = false;

  constructor() {
    this.#asked = new Promise((resolve) => (this.#ask = resolve));
  }

  /** Producer: resolves true when the reader asks for a page, false when it stopped. */
  wanted(): Promise<boolean> {
    return this.#asked;
  }

  give(page: T): void {
    this.#asked = new Promise((resolve) => (this.#ask = resolve));
    this.#deliver?.(page);
  }

  /** Producer: no more pages (err: why). */
  end(err: unknown): void {
    this.#ended = true;
    this.#endError = err;
    if (err === null) this.#deliver?.(null);
    else this.#fail?.(err);
  }

  /** Reader: the next page, or null once the producer ended. */
  take(): Promise<T | null> {
    if (this.#ended) return this.#endError === null ? Promise.resolve(null) : Promise.reject(this.#endError);
    const next = new Promise<T | null>((resolve, reject) => {
      this.#deliver = resolve;
      this.#fail = reject;
    });
    this.#ask?.(true);
    return next;
  }

  /** Reader: it wants no more pages. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#ask?.(false);
  }
}
