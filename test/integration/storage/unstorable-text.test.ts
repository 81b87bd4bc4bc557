/**
 * Text PostgreSQL cannot hold (storage/db/unstorable-text.ts): a NUL character in a
 * parameter is the caller's invalid request, for text and jsonb, whether the statement
 * runs prepared or not, and the connection serves the next statement.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { sql } from 'kysely';
import { onePostgresConnection, postgresReachable, type LooseDb } from '../../helpers/databases.js';
import { AppError } from '../../../src/domain/shared/errors.js';

const reachable = await postgresReachable();

async function oneConnection(preparedStatements: boolean): Promise<LooseDb> {
  const { db, close } = await onePostgresConnection(preparedStatements);
  onTestFinished(close);
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
