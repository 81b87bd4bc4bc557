import { sql } from 'kysely';
import type { ApiKeysTable, Database } from '../database.js';
import type { ApiKeyRecord, ApiKeyStore, KeyRotation } from '../../../domain/identity/api-key.types.js';
import type { BudgetWindow, KeyPolicy } from '../../../domain/identity/key-policy.types.js';
import { KEY_REVOKED_CHANNEL } from '../key-revocation-feed.js';

type PolicyColumns = Pick<ApiKeysTable, 'models' | 'budget_limit_micros' | 'budget_window' | 'rpm' | 'tpm' | 'expires_at' | 'metadata' | 'tags'>;

/** The policy a row stores; null when it sets nothing. */
export function policyOf(row: PolicyColumns): KeyPolicy | null {
  const policy: { -readonly [K in keyof KeyPolicy]: KeyPolicy[K] } = {};
  if (row.models !== null) policy.models = JSON.parse(row.models) as string[];
  if (row.budget_limit_micros !== null && row.budget_window !== null) {
    policy.budget = { limitMicros: Number(row.budget_limit_micros), window: row.budget_window as BudgetWindow };
  }
  if (row.rpm !== null) policy.rpm = Number(row.rpm);
  if (row.tpm !== null) policy.tpm = Number(row.tpm);
  if (row.expires_at !== null) policy.expiresAtMs = Number(row.expires_at);
  if (row.metadata !== null) policy.metadata = JSON.parse(row.metadata) as Record<string, string>;
  if (row.tags !== null) policy.tags = JSON.parse(row.tags) as string[];
  return Object.keys(policy).length === 0 ? null : policy;
}

function policyColumns(policy: KeyPolicy | null): PolicyColumns {
  const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));
  return {
    models: json(policy?.models),
    budget_limit_micros: policy?.budget?.limitMicros ?? null,
    budget_window: policy?.budget?.window ?? null,
    rpm: policy?.rpm ?? null,
    tpm: policy?.tpm ?? null,
    expires_at: policy?.expiresAtMs ?? null,
    metadata: json(policy?.metadata),
    tags: json(policy?.tags),
  };
}

const toRecord = (row: ApiKeysTable): ApiKeyRecord => ({
  id: row.id,
  projectId: row.project_id,
  name: row.name,
  prefix: row.prefix,
  keyHash: row.key_hash,
  createdAtMs: Number(row.created_at),
  revokedAtMs: row.revoked_at === null ? null : Number(row.revoked_at),
  policy: policyOf(row),
  previousKeyHash: row.previous_key_hash,
  previousValidUntilMs: row.previous_valid_until === null ? null : Number(row.previous_valid_until),
  ownerUserId: row.owner_user_id,
});

export class ApiKeysRepository implements ApiKeyStore {
  constructor(private readonly database: Database) {}

  async insert(key: ApiKeyRecord): Promise<void> {
    await this.database.db
      .insertInto('api_keys')
      .values({
        id: key.id,
        project_id: key.projectId,
        name: key.name,
        prefix: key.prefix,
        key_hash: key.keyHash,
        created_at: key.createdAtMs,
        revoked_at: key.revokedAtMs,
        ...policyColumns(key.policy),
        previous_key_hash: key.previousKeyHash,
        previous_valid_until: key.previousValidUntilMs,
        owner_user_id: key.ownerUserId ?? null,
      })
      .execute();
  }

  /** The key whose secret, or whose replaced secret still kept after a rotation, has this hash. */
  async findByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.database.db
      .selectFrom('api_keys')
      .selectAll()
      .where((eb) => eb.or([eb('key_hash', '=', keyHash), eb('previous_key_hash', '=', keyHash)]))
      .executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async findById(id: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.database.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async listByProject(projectId: string, ownerUserId?: string): Promise<ApiKeyRecord[]> {
    let query = this.database.db.selectFrom('api_keys').selectAll().where('project_id', '=', projectId);
    if (ownerUserId !== undefined) query = query.where('owner_user_id', '=', ownerUserId);
    const rows = await query.orderBy('id', 'desc').execute();
    return rows.map(toRecord);
  }

  /**
   * Marks the key revoked (keeping the first revocation time); returns the record after.
   * On PostgreSQL the same statement notifies the other replicas (key-revocation-feed.ts),
   * so the announcement goes out exactly when the revocation commits.
   */
  async revoke(id: string, nowMs: number): Promise<ApiKeyRecord | undefined> {
    const revoke = this.database.db
      .updateTable('api_keys')
      .set({ revoked_at: nowMs })
      .where('id', '=', id)
      .where('revoked_at', 'is', null);
    if (this.database.flavor === 'postgres') {
      await this.database.db
        .with('revoked', () => revoke.returning('key_hash'))
        .selectFrom('revoked')
        .select(sql`pg_notify(${KEY_REVOKED_CHANNEL}, key_hash)`.as('notified'))
        .execute();
    } else await revoke.execute();
    const record = await this.findById(id);
    if (record) await this.#announce([record.previousKeyHash]);
    return record;
  }

  /** Replaces the name and policy; the other replicas drop their cached lookups of the key's secrets. */
  async update(id: string, changes: { name: string; policy: KeyPolicy | null }): Promise<ApiKeyRecord | undefined> {
    await this.database.db
      .updateTable('api_keys')
      .set({ name: changes.name, ...policyColumns(changes.policy) })
      .where('id', '=', id)
      .execute();
    const record = await this.findById(id);
    if (record) await this.#announce([record.keyHash, record.previousKeyHash]);
    return record;
  }

  /** The new secret replaces the old, which is kept as the previous one while its grace lasts (else dropped). */
  async rotate(id: string, rotation: KeyRotation): Promise<ApiKeyRecord | undefined> {
    const before = await this.findById(id);
    if (!before || before.revokedAtMs !== null) return undefined;
    const keep = rotation.previousValidUntilMs !== null;
    await this.database.db
      .updateTable('api_keys')
      .set({
        key_hash: rotation.keyHash,
        prefix: rotation.prefix,
        previous_key_hash: keep ? before.keyHash : null,
        previous_valid_until: rotation.previousValidUntilMs,
      })
      .where('id', '=', id)
      .where('key_hash', '=', before.keyHash)
      .where('revoked_at', 'is', null)
      .execute();
    const after = await this.findById(id);
    if (after?.keyHash !== rotation.keyHash) return undefined;
    await this.#announce([before.keyHash, before.previousKeyHash]);
    return after;
  }

  /** On PostgreSQL, tells the other replicas to read these secrets' keys anew (the revocation feed's channel). */
  async #announce(hashes: ReadonlyArray<string | null>): Promise<void> {
    if (this.database.flavor !== 'postgres') return;
    for (const hash of hashes) if (hash !== null) await sql`select pg_notify(${KEY_REVOKED_CHANNEL}, ${hash})`.execute(this.database.db);
  }
}
