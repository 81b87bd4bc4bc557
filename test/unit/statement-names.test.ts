/** Which statement texts a PostgreSQL connection prepares (storage/db/prepared-statements.ts). */
import { describe, expect, it } from 'vitest';
import { StatementNames } from '../../src/storage/db/prepared-statements.js';

const text = (i: number) => `select "id" from "projects" where "id" = $1 and ${i} = ${i}`;

describe('StatementNames', () => {
  it('names a parameterised data statement the second time it is seen, and keeps its name', () => {
    const names = new StatementNames();
    expect(names.nameOf(text(1))).toBeUndefined();
    expect(names.nameOf(text(1))).toBe('sluice_1');
    expect(names.nameOf(text(1))).toBe('sluice_1');
    expect(names.nameOf(text(2))).toBeUndefined();
    expect(names.nameOf(text(2))).toBe('sluice_2');
    for (const statement of ['insert into "t" ("a") values ($1)', 'update "t" set "a" = $1', 'delete from "t" where "a" = $1', 'with s0 as (delete from "t" where "a" = $1) select 1']) {
      names.nameOf(statement);
      expect(names.nameOf(statement)).toMatch(/^sluice_\d+$/);
    }
  });

  it('never names a statement without parameters, nor one that is not a data statement', () => {
    const names = new StatementNames();
    for (const statement of ['select 1', 'show synchronous_commit', 'set synchronous_commit = off', 'listen "sluice_keys"', 'create table "t" ("a" text default $1)']) {
      names.nameOf(statement);
      names.nameOf(statement);
    }
    expect(names.nameOf('select 1')).toBeUndefined();
    expect(names.nameOf('show synchronous_commit')).toBeUndefined();
    expect(names.nameOf('set synchronous_commit = off')).toBeUndefined();
    expect(names.nameOf('create table "t" ("a" text default $1)')).toBeUndefined();
  });

  it('names at most 256 texts, and a refused text is run unnamed from then on without its name being reused', () => {
    const names = new StatementNames();
    for (let i = 0; i < 300; i++) names.nameOf(text(i));
    const given = Array.from({ length: 300 }, (_, i) => names.nameOf(text(i)));
    expect(given.filter((n) => n !== undefined)).toHaveLength(256);
    expect(given[255]).toBe('sluice_256');
    expect(given[256]).toBeUndefined();

    const fresh = new StatementNames();
    fresh.nameOf(text(1));
    expect(fresh.nameOf(text(1))).toBe('sluice_1');
    fresh.refuse(text(1));
    expect(fresh.nameOf(text(1))).toBeUndefined();
    expect(fresh.nameOf(text(1))).toBeUndefined();
    fresh.nameOf(text(2));
    expect(fresh.nameOf(text(2))).toBe('sluice_2');
  });

  it('after stop() names nothing, neither the texts it had named nor new ones', () => {
    const names = new StatementNames();
    names.nameOf(text(1));
    expect(names.nameOf(text(1))).toBe('sluice_1');
    names.nameOf(text(2));
    names.stop();
    expect(names.nameOf(text(1))).toBeUndefined();
    expect(names.nameOf(text(2))).toBeUndefined();
    names.nameOf(text(3));
    expect(names.nameOf(text(3))).toBeUndefined();
  });
});
