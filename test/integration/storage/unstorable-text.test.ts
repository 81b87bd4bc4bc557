/**
 * Text PostgreSQL cannot hold (storage/db/unstorable-text.ts): a NUL character in a
 * parameter is the caller's invalid request, for text and jsonb, whether the statement
 * runs prepared or not, and the connection serves the next statement.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Kysely, sql } from 'kysely';
import { postgresReachable, postgresSchema } from '../../helpers/databases.js';
import { postgresDialect } from '../../../src/storage/db/postgres-dialect.js';
import { postgresPool } from '../../../src/storage/db/prepared-statements.js';
import { AppError } from '../../../src/domain/shared/errors.js';

const reachable = await postgresReachable();

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function oneConnection(preparedStatements: boolean): Promise<Kysely<Record<string, Record<string, unknown>>>> {
  const { url, drop } = await postgresSchema();
  const db = new Kysely<Record<string, Record<string, unknown>>>({ dialect: postgresDialect(postgresPool(url, { max: 1, preparedStatements })) });
  cleanups.push(async () => (await db.destroy(), await drop()));
  await sql`create table t (id text primary key, doc jsonb)`.execute(db);
  return db;
}

const refusal = { kind: 'invalid_request', code: 'invalid_text', message: 'Text containing the NUL character (\\u0000) is not accepted' };

describe.skipIf(!reachable)('text PostgreSQL cannot hold', () => {
  for (const preparedStatements of [true, false]) {
    it(`a NUL in a looked-up id or a stored jsonb is the caller's invalid request (statements ${preparedStatements ? 'prepared' : 'unprepared'})`, async () => {
      const db = await oneConnection(preparedStatements);
      const byId = (id: string) => db.selectFrom('t').selectAll().where('id', '=', id).execute();
      expect(await byId('a')).toEqual([]);
      expect(await byId('a')).toEqual([]);

      const lookup = byId('a\u0000b');
      await expect(lookup).rejects.toBeInstanceOf(AppError);
      await expect(lookup).rejects.toMatchObject(refusal);
      await expect(db.insertInto('t').values({ id: 'x', doc: JSON.stringify({ text: 'a\u0000b' }) }).execute()).rejects.toMatchObject(refusal);

      await db.insertInto('t').values({ id: 'y', doc: JSON.stringify({ text: 'plain' }) }).execute();
      expect(await byId('y')).toEqual([{ id: 'y', doc: { text: 'plain' } }]);
    });
  }

  it('any other database error passes through as PostgreSQL gave it', async () => {
    const db = await oneConnection(true);
    await db.insertInto('t').values({ id: 'y', doc: null }).execute();
    await expect(db.insertInto('t').values({ id: 'y', doc: null }).execute()).rejects.toMatchObject({ code: '23505' });
  });
});
