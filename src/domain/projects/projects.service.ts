/** Projects, their API keys, credits and usage: what the admin API and the CLI manage. */
import { newId, newUuid, isUuid } from '../shared/ids.js';
import { AppError, invalidRequest } from '../shared/errors.js';
import type { Clock } from '../shared/clock.js';
import type { Page } from '../shared/pagination.js';
import type { CreditGrant, CreditGrantStore, Project, ProjectStore, UsageHistory } from './project.types.js';
import type { ApiKeyRecord, ApiKeyStore } from '../identity/api-key.types.js';
import type { UsageRecord } from '../billing/usage.types.js';
import type { ApiKeyAuthenticator } from '../identity/authenticator.js';
import { generateApiKey } from '../identity/api-keys.js';
import { applyKeyPolicyPatch, hasPolicy, readKeyPolicyPatch, type KeyPolicyInput } from '../identity/key-policy.js';
import type { SpendQuery, SpendRow, UsageBucketRow, UsageReportQuery, UsageReports } from '../billing/usage-reports.port.js';

export interface ProjectsServiceDeps {
  projects: ProjectStore;
  keys: ApiKeyStore;
  usage: UsageHistory;
  reports: UsageReports;
  grants: CreditGrantStore;
  authenticator: ApiKeyAuthenticator;
  /** Hears of credit granted here, so balances this process keeps are read anew (billing.service.ts). */
  balances: { balanceChanged(projectId: string): void };
  clock: Clock;
  freeCreditsMicros: number;
}

const MAX_NAME_LENGTH = 200;
/** The longest a rotated-out secret may stay valid: 30 days. */
export const MAX_ROTATION_GRACE_SECONDS = 30 * 24 * 3600;

function validName(name: unknown, what: string): string {
  if (typeof name !== 'string' || name.trim() === '') throw invalidRequest(`${what} name is required`, 'name');
  if (name.length > MAX_NAME_LENGTH) throw invalidRequest(`${what} name must be at most ${MAX_NAME_LENGTH} characters`, 'name');
  return name.trim();
}

const keyNotFound = (keyId: string) => new AppError('not_found', `API key not found: ${keyId}`, { code: 'key_not_found' });

export class ProjectsService {
  constructor(private readonly deps: ProjectsServiceDeps) {}

  async createProject(name: unknown): Promise<Project> {
    return this.deps.projects.insert({
      id: newUuid(),
      name: validName(name, 'Project'),
      balanceMicros: this.deps.freeCreditsMicros,
      createdAtMs: this.deps.clock.nowMs(),
    });
  }

  /** A project with a fixed id (e.g. the gateway's tenant), created with no credit if absent. */
  async ensureProject(id: string, name: string): Promise<Project> {
    return this.deps.projects.insertIfAbsent({ id, name, balanceMicros: 0, createdAtMs: this.deps.clock.nowMs() });
  }

  async getProject(id: string): Promise<Project> {
    const project = isUuid(id) ? await this.deps.projects.findById(id.toLowerCase()) : undefined;
    if (!project) throw new AppError('not_found', `Project not found: ${id}`, { code: 'project_not_found' });
    return project;
  }

  /** Every project, newest first, a page at a time; `after` is the last id of the previous page. */
  async listProjects(limit: number, after?: string): Promise<Page<Project>> {
    const page = await this.deps.projects.listPage(limit, after === undefined ? undefined : after.toLowerCase());
    if (!page) throw invalidRequest(`after must be the id of a project, got "${after}"`, 'after', 'invalid_cursor');
    return page;
  }

  /** Returns the record and the plaintext key, which is never available again; `ownerUserId` is the user making it (null: an operator, the admin token or the CLI). */
  async createKey(projectId: string, name: unknown, policyInput: KeyPolicyInput = {}, ownerUserId: string | null = null): Promise<{ record: ApiKeyRecord; key: string }> {
    const project = await this.getProject(projectId);
    const keyName = name === undefined ? 'default' : validName(name, 'Key');
    const policy = applyKeyPolicyPatch({}, readKeyPolicyPatch(policyInput, this.deps.clock.nowMs()));
    const { key, prefix, hash } = generateApiKey();
    const record: ApiKeyRecord = {
      id: newId('key_'),
      projectId: project.id,
      name: keyName,
      prefix,
      keyHash: hash,
      createdAtMs: this.deps.clock.nowMs(),
      revokedAtMs: null,
      policy: hasPolicy(policy) ? policy : null,
      previousKeyHash: null,
      previousValidUntilMs: null,
      ownerUserId,
    };
    await this.deps.keys.insert(record);
    this.deps.authenticator.forget(hash);
    return { record, key };
  }

  /** Renames the key and changes its policy (absent fields kept, null fields cleared); every replica sees it within the key cache's TTL. */
  async updateKey(keyId: string, change: { name?: unknown } & KeyPolicyInput): Promise<ApiKeyRecord> {
    const before = await this.#key(keyId);
    const name = change.name === undefined ? before.name : validName(change.name, 'Key');
    const policy = applyKeyPolicyPatch(before.policy ?? {}, readKeyPolicyPatch(change, this.deps.clock.nowMs()));
    const record = await this.deps.keys.update(before.id, { name, policy: hasPolicy(policy) ? policy : null });
    if (!record) throw keyNotFound(keyId);
    this.#forget(before);
    return record;
  }

  /**
   * Issues the key a new secret; the old one keeps working for `graceSeconds` (0: it stops
   * at once), and a secret an earlier rotation kept stops now. Returns the new secret once.
   */
  async rotateKey(keyId: string, graceSeconds: unknown): Promise<{ record: ApiKeyRecord; key: string }> {
    if (typeof graceSeconds !== 'number' || !Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > MAX_ROTATION_GRACE_SECONDS) {
      throw invalidRequest(`grace_seconds must be a whole number from 0 to ${MAX_ROTATION_GRACE_SECONDS}, got ${JSON.stringify(graceSeconds ?? null)}`, 'grace_seconds');
    }
    const before = await this.#key(keyId);
    if (before.revokedAtMs !== null) throw new AppError('conflict', `API key ${before.id} is revoked and cannot be rotated`, { code: 'key_revoked' });
    const { key, prefix, hash } = generateApiKey();
    const previousValidUntilMs = graceSeconds === 0 ? null : this.deps.clock.nowMs() + graceSeconds * 1000;
    const record = await this.deps.keys.rotate(before.id, { keyHash: hash, prefix, previousValidUntilMs });
    if (!record) throw new AppError('conflict', `API key ${before.id} changed while it was being rotated; try again`, { code: 'key_changed' });
    this.#forget(before);
    this.deps.authenticator.forget(hash);
    return { record, key };
  }

  async #key(keyId: string): Promise<ApiKeyRecord> {
    const record = await this.deps.keys.findById(keyId);
    if (!record) throw keyNotFound(keyId);
    return record;
  }

  /** Drops this process's cached lookups of the key's secrets. */
  #forget(record: ApiKeyRecord): void {
    this.deps.authenticator.forget(record.keyHash);
    if (record.previousKeyHash !== null) this.deps.authenticator.forget(record.previousKeyHash);
  }

  /** The project's keys; only the ones `ownerUserId` owns when it is given. */
  async listKeys(projectId: string, ownerUserId?: string): Promise<ApiKeyRecord[]> {
    await this.getProject(projectId);
    return this.deps.keys.listByProject(projectId.toLowerCase(), ownerUserId);
  }

  /** The project's keys (only `ownerUserId`'s when it is given), each with the time of its last usage record (null: never used). */
  async listKeysWithLastUse(projectId: string, ownerUserId?: string): Promise<Array<{ record: ApiKeyRecord; lastUsedAtMs: number | null }>> {
    const keys = await this.listKeys(projectId, ownerUserId);
    const lastUsed = await this.deps.reports.lastUsedByKey(projectId.toLowerCase());
    return keys.map((record) => ({ record, lastUsedAtMs: lastUsed.get(record.id) ?? null }));
  }

  /** Usage summed per time bucket (and group); a project's, or every project's when `projectId` is null. */
  async usageReport(query: UsageReportQuery): Promise<UsageBucketRow[]> {
    if (query.projectId !== null) await this.getProject(query.projectId);
    return this.deps.reports.aggregate(query);
  }

  /** The spend report's rows, read a page at a time as they are iterated; a project's, or every project's when `projectId` is null. */
  async spendReport(query: SpendQuery): Promise<AsyncIterable<SpendRow>> {
    if (query.projectId !== null) await this.getProject(query.projectId);
    return this.deps.reports.spend(query);
  }

  /** The key's record (never its secret); 404 when there is none. */
  async getKey(keyId: string): Promise<ApiKeyRecord> {
    const record = await this.deps.keys.findById(keyId);
    if (!record) throw new AppError('not_found', `API key not found: ${keyId}`, { code: 'key_not_found' });
    return record;
  }

  async revokeKey(keyId: string): Promise<ApiKeyRecord> {
    const record = await this.deps.keys.revoke(keyId, this.deps.clock.nowMs());
    if (!record) throw keyNotFound(keyId);
    this.#forget(record);
    return record;
  }

  /** Adds (or, negative, takes away) credit, recording the grant and its reason with the balance change. */
  async grantCredits(projectId: string, amountMicros: number, reason: string | null = null): Promise<Project> {
    if (!Number.isSafeInteger(amountMicros)) throw invalidRequest('amount_usd must be a number', 'amount_usd');
    await this.getProject(projectId);
    const grant: CreditGrant = { id: newId('grant_'), projectId: projectId.toLowerCase(), amountMicros, reason: reason?.trim() || null, createdAtMs: this.deps.clock.nowMs() };
    const project = await this.deps.grants.grant(grant);
    this.deps.balances.balanceChanged(grant.projectId);
    if (!project) throw new AppError('not_found', `Project not found: ${projectId}`, { code: 'project_not_found' });
    return project;
  }

  /** The project's latest credit grants, newest first. */
  async listGrants(projectId: string, limit = 100): Promise<CreditGrant[]> {
    await this.getProject(projectId);
    return this.deps.grants.listByProject(projectId.toLowerCase(), limit);
  }

  async listUsage(projectId: string, limit: number, after?: string): Promise<Page<UsageRecord>> {
    await this.getProject(projectId);
    return this.deps.usage.listByProject(projectId.toLowerCase(), limit, after);
  }
}
