import { SqliteAdapter, sql, type Kysely } from 'kysely';

/**
 * On SQLite, usage records become one B-tree clustered by (project_id, id), WITHOUT ROWID:
 * every API call inserts a row, and the rowid table, its primary-key index and the
 * project index were three trees to update (and more pages to write per commit) where
 * one serves every read (a project's records, newest first). PostgreSQL keeps its heap
 * and indexes; nothing changes there.
 */
const COLUMNS = 'id, project_id, key_id, model, route, input_tokens, output_tokens, cost_micros, request_id, status, created_at';

const isSqlite = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof SqliteAdapter;

/**
 * One transaction for the whole rebuild: Kysely runs SQLite migrations outside one (its
 * adapter reports no transactional DDL, though SQLite's DDL is), and a rebuild cut short
 * would leave a half-made table, or a usage row written between the copy and the drop
 * would be lost.
 */
async function rebuild(db: Kysely<unknown>, tableOptions: string, primaryKey: string, index: string | null): Promise<void> {
  await sql.raw('begin immediate').execute(db);
  try {
    await rebuildSteps(db, tableOptions, primaryKey, index);
    await sql.raw('commit').execute(db);
  } catch (err) {
    await sql.raw('rollback').execute(db);
    throw err;
  }
}

async function rebuildSteps(db: Kysely<unknown>, tableOptions: string, primaryKey: string, index: string | null): Promise<void> {
  await sql.raw(`create table usage_records_rebuilt (
    id varchar(64) not null,
    project_id varchar(64) not null references projects (id),
    key_id varchar(64),
    model varchar(128) not null,
    route varchar(128) not null,
    input_tokens bigint not null,
    output_tokens bigint not null,
    cost_micros bigint not null,
    request_id varchar(64) not null,
    status integer not null,
    created_at bigint not null,
    primary key (${primaryKey})
  ) ${tableOptions}`).execute(db);
  await sql.raw(`insert into usage_records_rebuilt (${COLUMNS}) select ${COLUMNS} from usage_records`).execute(db);
  await sql.raw('drop table usage_records').execute(db);
  await sql.raw('alter table usage_records_rebuilt rename to usage_records').execute(db);
  if (index) await sql.raw(index).execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  if (isSqlite(db)) await rebuild(db, 'without rowid', 'project_id, id', null);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isSqlite(db)) await rebuild(db, '', 'id', 'create index usage_project_id_idx on usage_records (project_id, id)');
}
