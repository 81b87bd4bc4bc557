import { describe, expect, it } from 'vitest';
import { createBody, editBody, EMPTY_POLICY_FORM, formOfKey, policySummary } from './key-policy.js';
import type { ApiKey } from './types.js';

const key: ApiKey = {
  id: 'key_1',
  project_id: 'p',
  name: 'ci',
  prefix: 'sk-sluice-abcdef',
  active: true,
  created_at: 0,
  revoked_at: null,
  models: ['small-*', 'gpt-4o'],
  budget: { limit_usd: 2.5, window: 'day' },
  rpm: 60,
  tpm: null,
  expires_at: 1_893_456_000, // 2030-01-01T00:00:00Z
  metadata: { team: 'ml' },
  tags: null,
  previous_key_valid_until: null,
};

describe('key policy forms', () => {
  it('a new key sends only the fields set', () => {
    expect(createBody(EMPTY_POLICY_FORM)).toEqual({});
    const form = { ...EMPTY_POLICY_FORM, models: ' small-*, ,gpt-4o ', budgetUsd: '2.5', budgetWindow: 'week' as const, rpm: '60', tags: 'ci, nightly', metadata: 'team = ml\n\nowner=lin' };
    expect(createBody(form)).toEqual({ models: ['small-*', 'gpt-4o'], budget: { limit_usd: 2.5, window: 'week' }, rpm: 60, tags: ['ci', 'nightly'], metadata: { team: 'ml', owner: 'lin' } });
    expect(createBody({ ...EMPTY_POLICY_FORM, expiresAt: '2030-01-01T00:00' })).toEqual({ expires_at: 1_893_456_000 });
  });

  it('an edit sends what changed, clearing emptied fields with null', () => {
    const form = formOfKey(key);
    expect(form).toEqual({ models: 'small-*, gpt-4o', budgetUsd: '2.5', budgetWindow: 'day', rpm: '60', tpm: '', expiresAt: '2030-01-01T00:00', tags: '', metadata: 'team=ml' });
    expect(editBody(form, key)).toEqual({});
    expect(editBody({ ...form, rpm: '120', models: '', budgetWindow: 'month' }, key)).toEqual({ rpm: 120, models: null, budget: { limit_usd: 2.5, window: 'month' } });
  });

  it('refuses a metadata line that is not name=value, naming the line', () => {
    expect(() => createBody({ ...EMPTY_POLICY_FORM, metadata: 'team=ml\nowner' })).toThrow('metadata: line 2 must be name=value, got "owner"');
  });

  it('summarises the fields a key sets', () => {
    expect(policySummary(key)).toEqual([
      ['Models', 'small-*, gpt-4o'],
      ['Budget', '$2.50 a day'],
      ['Requests/min', '60'],
      ['Expires', '2030-01-01 00:00 UTC'],
      ['Metadata', 'team=ml'],
    ]);
    expect(policySummary({ ...key, models: null, budget: null, rpm: null, expires_at: null, metadata: null })).toEqual([]);
  });
});
