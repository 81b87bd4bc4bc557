/** The fields of a key's policy, labelled, in a fieldset; the field an API error names is marked invalid and points at the error. */
import { useId } from 'react';
import { BUDGET_WINDOWS, type PolicyForm } from '../lib/key-policy.js';
import type { BudgetWindow } from '../lib/types.js';

interface Props {
  value: PolicyForm;
  onChange(next: PolicyForm): void;
  /** The request field an error named (`budget.limit_usd`, `rpm`…), and the id of the element showing the error. */
  invalid?: { param: string | null; errorId: string };
  legend?: string;
}

const FIELD_OF: Record<string, keyof PolicyForm> = { models: 'models', budget: 'budgetUsd', 'budget.limit_usd': 'budgetUsd', 'budget.window': 'budgetWindow', rpm: 'rpm', tpm: 'tpm', expires_at: 'expiresAt', tags: 'tags', metadata: 'metadata' };

export function KeyPolicyFields({ value, onChange, invalid, legend = 'Policy (empty: no limit)' }: Props) {
  const id = useId();
  const badField = invalid?.param ? (FIELD_OF[invalid.param] ?? FIELD_OF[invalid.param.split('.')[0]!]) : undefined;
  const field = (name: keyof PolicyForm) => ({
    id: `${id}-${name}`,
    value: value[name],
    onChange: (event: { target: { value: string } }) => onChange({ ...value, [name]: event.target.value }),
    ...(badField === name && { 'aria-invalid': true, 'aria-describedby': invalid!.errorId }),
  });
  return (
    <fieldset className="policy-fields">
      <legend>{legend}</legend>
      <label htmlFor={`${id}-models`}>Models (comma-separated; globs like small-*)</label>
      <input {...field('models')} placeholder="every model" />
      <label htmlFor={`${id}-budgetUsd`}>Budget (USD)</label>
      <div className="budget-row">
        <input {...field('budgetUsd')} inputMode="decimal" placeholder="no budget" />
        <label htmlFor={`${id}-budgetWindow`}>per</label>
        <select {...field('budgetWindow')} onChange={(e) => onChange({ ...value, budgetWindow: e.target.value as BudgetWindow })}>
          {BUDGET_WINDOWS.map((window) => (
            <option key={window} value={window}>
              {window}
            </option>
          ))}
        </select>
      </div>
      <label htmlFor={`${id}-rpm`}>Requests per minute</label>
      <input {...field('rpm')} inputMode="numeric" placeholder="no limit" />
      <label htmlFor={`${id}-tpm`}>Tokens per minute</label>
      <input {...field('tpm')} inputMode="numeric" placeholder="no limit" />
      <label htmlFor={`${id}-expiresAt`}>Expires (UTC)</label>
      <input {...field('expiresAt')} type="datetime-local" />
      <label htmlFor={`${id}-tags`}>Tags (comma-separated)</label>
      <input {...field('tags')} />
      <label htmlFor={`${id}-metadata`}>Metadata (one name=value a line)</label>
      <textarea {...field('metadata')} rows={2} />
    </fieldset>
  );
}
