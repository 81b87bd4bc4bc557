/** A project's API keys: create (the key shown once, with a copy button), list with last use, revoke after confirmation. */
import { useState, type FormEvent } from 'react';
import { get, post } from '../lib/api.js';
import { time } from '../lib/format.js';
import type { ApiKey } from '../lib/types.js';
import { useApi } from '../lib/use-api.js';
import { CopyButton, Empty, ErrorBox, Loading, TableWrap } from '../components/common.js';
import { ConfirmButton } from '../components/confirm.js';

export function KeysPanel({ projectId }: { projectId: string }) {
  const { data, error, loading, reload } = useApi((signal) => get<{ data: ApiKey[] }>(`/admin/projects/${projectId}/keys`, signal), [projectId]);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const [createError, setCreateError] = useState<unknown>(null);

  const create = async (event: FormEvent) => {
    event.preventDefault();
    setCreateError(null);
    try {
      const key = await post<ApiKey & { key: string }>(`/admin/projects/${projectId}/keys`, { name });
      setCreated({ name: key.name, key: key.key });
      setName('');
      reload();
    } catch (err) {
      setCreateError(err);
    }
  };

  return (
    <section aria-labelledby="keys-heading">
      <h2 id="keys-heading">API keys</h2>
      <form className="inline-form" onSubmit={(e) => void create(e)}>
        <label htmlFor="key-name">New key name</label>
        <input id="key-name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
        <button type="submit">Create key</button>
      </form>
      <ErrorBox error={createError} />
      {created && (
        <div className="new-key" role="status">
          <p>
            <strong>Copy the key “{created.name}” now: it is shown only once.</strong> Sluice stores only its hash; if it is lost, revoke it and
            create another.
          </p>
          <div className="key-row">
            <code data-testid="new-key">{created.key}</code>
            <CopyButton text={created.key} label="Copy key" />
          </div>
          <button type="button" className="secondary" onClick={() => setCreated(null)}>
            I have copied it
          </button>
        </div>
      )}
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
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {data.data.map((k) => (
                <tr key={k.id}>
                  <td>{k.name}</td>
                  <td>
                    <code>{k.prefix}…</code>
                  </td>
                  <td>{time(k.created_at)}</td>
                  <td>{k.last_used_at ? time(k.last_used_at) : 'never'}</td>
                  <td>
                    {k.active ? (
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
                    ) : (
                      <span className="chip chip-muted">revoked {time(k.revoked_at)}</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}
