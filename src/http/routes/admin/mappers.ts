/** Domain records → admin API wire objects (snake_case, Unix seconds, dollars). */
import { toUnixSeconds } from '../../../domain/shared/clock.js';
import { microsToUsd } from '../../../domain/shared/money.js';
import type { CreditGrant, Project } from '../../../domain/projects/project.types.js';
import type { ApiKeyRecord } from '../../../domain/identity/api-key.types.js';
import type { KeyPolicy } from '../../../domain/identity/key-policy.types.js';
import type { UsageRecord } from '../../../domain/billing/usage.types.js';

export const projectToWire = (p: Project) => ({
  id: p.id,
  object: 'project' as const,
  name: p.name,
  balance_usd: microsToUsd(p.balanceMicros),
  created_at: toUnixSeconds(p.createdAtMs),
});

export const keyPolicyToWire = (policy: KeyPolicy | null) => ({
  models: policy?.models ? [...policy.models] : null,
  budget: policy?.budget ? { limit_usd: microsToUsd(policy.budget.limitMicros), window: policy.budget.window } : null,
  rpm: policy?.rpm ?? null,
  tpm: policy?.tpm ?? null,
  expires_at: policy?.expiresAtMs === undefined ? null : toUnixSeconds(policy.expiresAtMs),
  metadata: policy?.metadata ? { ...policy.metadata } : null,
  tags: policy?.tags ? [...policy.tags] : null,
});

export const keyToWire = (k: ApiKeyRecord) => ({
  id: k.id,
  object: 'api_key' as const,
  project_id: k.projectId,
  name: k.name,
  prefix: k.prefix,
  active: k.revokedAtMs === null,
  created_at: toUnixSeconds(k.createdAtMs),
  revoked_at: k.revokedAtMs === null ? null : toUnixSeconds(k.revokedAtMs),
  owner_user_id: k.ownerUserId ?? null,
  ...keyPolicyToWire(k.policy),
  previous_key_valid_until: k.previousValidUntilMs === null ? null : toUnixSeconds(k.previousValidUntilMs),
});

export const usageToWire = (u: UsageRecord) => ({
  id: u.id,
  object: 'usage_record' as const,
  project_id: u.projectId,
  key_id: u.keyId,
  payer: { kind: u.payer.kind, id: u.payer.id },
  model: u.model,
  route: u.route,
  input_tokens: u.inputTokens,
  output_tokens: u.outputTokens,
  cost_usd: microsToUsd(u.costMicros),
  request_id: u.requestId,
  status: u.status,
  created_at: toUnixSeconds(u.createdAtMs),
});

export const grantToWire = (g: CreditGrant) => ({
  id: g.id,
  object: 'credit_grant' as const,
  project_id: g.projectId,
  amount_usd: microsToUsd(g.amountMicros),
  reason: g.reason,
  created_at: toUnixSeconds(g.createdAtMs),
});
