/**
 * A project's API keys: create one (the key shown once, with a copy button), list them with
 * their policy and last use, edit a key's name and policy, rotate it with a grace period
 * (the new secret shown once), and revoke it after confirmation. Admins, owners and
 * operators set policies and see every key; a member makes keys for themselves (no policy)
 * and sees, rotates and revokes only their own (the server decides; the page follows).
 */
import { useId, useState, type FormEvent } from 'react';
import { get, patch, post } from '../lib/api.js';
import { time } from '../lib/format.js';
import { createBody, editBody, EMPTY_POLICY_FORM, formOfKey, policySummary, type PolicyForm } from '../lib/key-policy.js';
import type { ApiKey } from '../lib/types.js';
import { useApi } from '../lib/use-api.js';
import { managesProject, useSession } from '../session.js';
import { ApiError } from '../lib/api.js';
import { CopyButton, Empty, ErrorBox, Loading, TableWrap } from '../components/common.js';
import { ConfirmButton } from '../components/confirm.js';
import { KeyPolicyFields } from '../components/key-policy-fields.js';
import { RotateKeyButton } from '../components/rotate-key.js';

type Secret = { name: string; key: string; rotated: boolean };

const paramOf = (error: unknown): string | null => (error instanceof ApiError ? error.param : null);

export function KeysPanel({ projectId }: { projectId: string }) {
  const manages = managesProject(useSession());
  const { data, error, loading, reload } = useApi((signal) => get<{ data: ApiKey[] }>(`/admin/projects/${projectId}/keys`, signal), [projectId]);
  const [secret, setSecret] = useState<Secret | null>(null);
  const [editing, setEditing] = useState<ApiKey | null>(null);

  return (
    <section aria-labelledby="keys-heading">
      <h2 id="keys-heading">API keys</h2>
      {!manages && <p className="hint">You see the keys you made. A project admin sets their models, budget and limits.</p>}
      <CreateKeyForm projectId={projectId} withPolicy={manages} onCreated={(key) => (setSecret({ name: key.name, key: key.key, rotated: false }), reload())} />
      {secret && <NewSecret secret={secret} onDone={() => setSecret(null)} />}
      {loading && !data && <Loading what="keys" />}
      <ErrorBox error={error} />
      {data && data.data.length === 0 && <Empty title="No keys yet">Create one above to call the API from your code.</Empty>}
      {data && data.data.length > 0 && (
        <TableWrap label="API keys">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Policy</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {data.data.map((k) => (
                <KeyRow key={k.id} apiKey={k} manages={manages} onEdit={() => setEditing(k)} onRotated={(r) => (setSecret({ name: r.name, key: r.key, rotated: true }), reload())} reload={reload} />
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {editing && <EditKeyForm key={editing.id} apiKey={editing} onClose={() => setEditing(null)} onSaved={() => (setEditing(null), reload())} />}
    </section>
  );
}

function CreateKeyForm({ projectId, withPolicy, onCreated }: { projectId: string; withPolicy: boolean; onCreated(key: ApiKey & { key: string }): void }) {
  const errorId = useId();
  const [name, setName] = useState('');
  const [policy, setPolicy] = useState<PolicyForm>(EMPTY_POLICY_FORM);
  const [error, setError] = useState<unknown>(null);
  const create = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      const key = await post<ApiKey & { key: string }>(`/admin/projects/${projectId}/keys`, { name, ...(withPolicy && createBody(policy)) });
      setName('');
      setPolicy(EMPTY_POLICY_FORM);
      onCreated(key);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form className="key-form" onSubmit={(e) => void create(e)} aria-label="New key">
      <div className="inline-form">
        <label htmlFor="key-name">New key name</label>
        <input id="key-name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
        <button type="submit">Create key</button>
      </div>
      {withPolicy && <KeyPolicyFields value={policy} onChange={setPolicy} invalid={{ param: paramOf(error), errorId }} legend="Policy of the new key (empty: no limit)" />}
      <div id={errorId}>
        <ErrorBox error={error} />
      </div>
    </form>
  );
}

function NewSecret({ secret, onDone }: { secret: Secret; onDone(): void }) {
  return (
    <div className="new-key" role="status">
      <p>
        <strong>
          Copy the {secret.rotated ? 'new secret of' : 'key'} “{secret.name}” now: it is shown only once.
        </strong>{' '}
        Sluice stores only its hash; if it is lost, {secret.rotated ? 'rotate the key again' : 'revoke it and create another'}.
      </p>
      <div className="key-row">
        <code data-testid="new-key">{secret.key}</code>
        <CopyButton text={secret.key} label="Copy key" />
      </div>
      <button type="button" className="secondary" onClick={onDone}>
        I have copied it
      </button>
    </div>
  );
}

interface KeyRowProps {
  apiKey: ApiKey;
  manages: boolean;
  onEdit(): void;
  onRotated(rotated: ApiKey & { key: string }): void;
  reload(): void;
}

function KeyRow({ apiKey: k, manages, onEdit, onRotated, reload }: KeyRowProps) {
  const policy = policySummary(k);
  return (
    <tr>
      <td>{k.name}</td>
      <td>
        <code>{k.prefix}…</code>
        {k.previous_key_valid_until !== null && k.active && <div className="hint">old secret works until {time(k.previous_key_valid_until)}</div>}
      </td>
      <td>
        {policy.length === 0 ? (
          <span className="hint">every model, no limits</span>
        ) : (
          <dl className="policy" aria-label={`Policy of ${k.name}`}>
            {policy.map(([label, text]) => (
              <div key={label}>
                <dt>{label}</dt>
                <dd>{text}</dd>
              </div>
            ))}
          </dl>
        )}
      </td>
      <td>{time(k.created_at)}</td>
      <td>{k.last_used_at ? time(k.last_used_at) : 'never'}</td>
      <td>
        {k.active ? (
          <div className="row-actions">
            {manages && (
              <button type="button" className="secondary" onClick={onEdit}>
                Edit {k.name}
              </button>
            )}
            <RotateKeyButton apiKey={k} onRotated={onRotated} />
            <ConfirmButton
              label={`Revoke ${k.name}`}
              title="Revoke this key?"
              message={`Calls made with “${k.name}” (${k.prefix}…) will be refused from now on. This cannot be undone.`}
              confirmLabel="Revoke key"
              danger
              onConfirm={async () => {
                await post(`/admin/keys/${k.id}/revoke`);
                reload();
              }}
            />
          </div>
        ) : (
          <span className="chip chip-muted">revoked {time(k.revoked_at)}</span>
        )}
      </td>
    </tr>
  );
}

function EditKeyForm({ apiKey, onClose, onSaved }: { apiKey: ApiKey; onClose(): void; onSaved(): void }) {
  const errorId = useId();
  const [name, setName] = useState(apiKey.name);
  const [policy, setPolicy] = useState<PolicyForm>(() => formOfKey(apiKey));
  const [error, setError] = useState<unknown>(null);
  const save = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      await patch(`/admin/keys/${apiKey.id}`, { ...(name !== apiKey.name && { name }), ...editBody(policy, apiKey) });
      onSaved();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form className="key-form card" onSubmit={(e) => void save(e)} aria-labelledby={`${errorId}-title`}>
      <h3 id={`${errorId}-title`}>Edit key “{apiKey.name}”</h3>
      <label htmlFor={`${errorId}-name`}>Key name</label>
      <input id={`${errorId}-name`} required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
      <KeyPolicyFields value={policy} onChange={setPolicy} invalid={{ param: paramOf(error), errorId }} legend="Policy (empty: no limit)" />
      <div id={errorId}>
        <ErrorBox error={error} />
      </div>
      <div className="actions">
        <button type="button" className="secondary" onClick={onClose}>
          Cancel
        </button>
        <button type="submit">Save key</button>
      </div>
    </form>
  );
}
