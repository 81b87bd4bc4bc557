/** The audit log: operators see every entry; a project's admins and owners see that project's. Filter by action; export as CSV or NDJSON. */
import { useState } from 'react';
import { download, get, query } from '../lib/api.js';
import { time } from '../lib/format.js';
import type { AuditEntry, List } from '../lib/types.js';
import { useApi } from '../lib/use-api.js';
import { isOperator, useSession } from '../session.js';
import { Empty, ErrorBox, Loading, TableWrap } from '../components/common.js';

const actorText = (e: AuditEntry) => `${e.actor.type.replace('_', ' ')}${e.actor.id ? ` ${e.actor.id}` : ''}`;

export function AuditPage() {
  const state = useSession();
  const projectId = isOperator(state) ? undefined : (state.projectId ?? undefined);
  const [action, setAction] = useState('');
  const filter = query({ project_id: projectId, action: action.trim() || undefined });
  const { data, error, loading } = useApi((signal) => get<List<AuditEntry>>(`/admin/audit${query({ project_id: projectId, action: action.trim() || undefined, limit: 100 })}`, signal), [projectId, action]);
  const [exportError, setExportError] = useState<unknown>(null);
  const save = (format: 'csv' | 'ndjson') => {
    setExportError(null);
    download(`/admin/audit/export${filter}${filter ? '&' : '?'}format=${format}`, `sluice-audit.${format}`).catch(setExportError);
  };
  const entries = data?.data ?? [];
  return (
    <>
      <h1>Audit log</h1>
      <p className="hint">Every change to keys, projects, credit, users and members, and every console sign-in. Entries are never changed or removed.</p>
      <div className="inline-form">
        <label htmlFor="audit-action">Action</label>
        <input id="audit-action" value={action} onChange={(e) => setAction(e.target.value)} placeholder="e.g. key.create" />
        <button type="button" className="secondary" onClick={() => save('csv')}>
          Export CSV
        </button>
        <button type="button" className="secondary" onClick={() => save('ndjson')}>
          Export NDJSON
        </button>
      </div>
      <ErrorBox error={error ?? exportError} />
      {loading && <Loading what="the audit log" />}
      {data && entries.length === 0 && <Empty title="No entries" />}
      {entries.length > 0 && (
        <TableWrap label="Audit entries">
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">From</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">Detail</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => (
                <tr key={e.id}>
                  <td>{time(e.created_at)}</td>
                  <td>{actorText(e)}</td>
                  <td>{e.actor.ip ?? '—'}</td>
                  <td>
                    <code>{e.action}</code>
                  </td>
                  <td>{e.target.id ?? e.target.type}</td>
                  <td>
                    <code>{JSON.stringify(e.detail)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </>
  );
}
