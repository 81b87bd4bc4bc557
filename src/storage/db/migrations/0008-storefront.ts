import type { Kysely } from 'kysely';

/**
 * The agent storefront: credit accounts (an agent's Credits, or a receipt stored by the
 * SHA-256 of its id), the ledger of credit movements they are rebuilt from (a payment
 * reference is unique: a payment credits once), and card checkouts started for agents.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('storefront_accounts')
    .addColumn('seller_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('holder_kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('holder_id', 'varchar(128)', (c) => c.notNull())
    .addColumn('balance_micros', 'bigint', (c) => c.notNull())
    .addColumn('purchased_micros', 'bigint', (c) => c.notNull())
    .addColumn('consumed_micros', 'bigint', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('storefront_accounts_pk', ['seller_id', 'holder_kind', 'holder_id'])
    .execute();

  await db.schema
    .createTable('storefront_ledger')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('seller_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('holder_kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('holder_id', 'varchar(128)', (c) => c.notNull())
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('amount_micros', 'bigint', (c) => c.notNull())
    .addColumn('payment_ref', 'varchar(256)', (c) => c.unique())
    .addColumn('rail', 'varchar(16)')
    .addColumn('detail', 'varchar(256)')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('storefront_ledger_holder_idx')
    .on('storefront_ledger')
    .columns(['seller_id', 'holder_kind', 'holder_id', 'id'])
    .execute();

  await db.schema
    .createTable('storefront_checkouts')
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('seller_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('agent_id', 'varchar(128)', (c) => c.notNull())
    .addColumn('plan_id', 'varchar(64)', (c) => c.notNull())
    .addColumn('amount_micros', 'bigint', (c) => c.notNull())
    .addColumn('provider', 'varchar(16)', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('storefront_checkouts').execute();
  await db.schema.dropTable('storefront_ledger').execute();
  await db.schema.dropTable('storefront_accounts').execute();
}
