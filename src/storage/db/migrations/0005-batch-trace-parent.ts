import type { Kysely } from 'kysely';

/**
 * `batches.trace_parent`: the W3C traceparent of the request that created the batch, when
 * tracing was on, so every line's span (on whichever worker, hours later) links to that
 * request's span. NULL when tracing was off at creation, and on older rows.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('batches').addColumn('trace_parent', 'varchar(64)').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('batches').dropColumn('trace_parent').execute();
}
