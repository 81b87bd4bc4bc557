/** The chosen project's members: list; add, change a role, remove (operators and the project's admins and owners). */
import { useState, type FormEvent } from 'react';
import { api, del, get, post } from '../lib/api.js';
import { time } from '../lib/format.js';
import type { ProjectMember, ProjectRole } from '../lib/types.js';
import { useApi } from '../lib/use-api.js';
import { managesProject, useSession } from '../session.js';
import { Empty, ErrorBox, Loading, TableWrap } from '../components/common.js';
import { NeedsProject } from '../shell.js';

const ROLES: ProjectRole[] = ['viewer', 'member', 'admin', 'owner'];

export function MembersPage() {
  const state = useSession();
  return (
    <>
      <h1>Members</h1>
      <NeedsProject>{state.projectId && <MembersPanel projectId={state.projectId} manages={managesProject(state)} />}</NeedsProject>
    </>
  );
}

function MembersPanel({ projectId, manages }: { projectId: string; manages: boolean }) {
  const { data, error, loading, reload } = useApi((signal) => get<{ data: ProjectMember[] }>(`/admin/projects/${projectId}/members`, signal), [projectId]);
  const [userId, setUserId] = useState('');
  const [role, setRole] = useState<ProjectRole>('member');
  const [changeError, setChangeError] = useState<unknown>(null);
  const change = async (action: () => Promise<unknown>) => {
    setChangeError(null);
    try {
      await action();
      reload();
    } catch (err) {
      setChangeError(err);
    }
  };
  const add = (event: FormEvent) => {
    event.preventDefault();
    void change(async () => {
      await post(`/admin/projects/${projectId}/members`, { user_id: userId.trim(), role });
      setUserId('');
    });
  };
  const members = data?.data ?? [];
  return (
    <section aria-labelledby="members-heading">
      <h2 id="members-heading">People in this project</h2>
      <p className="hint">Viewers read usage and logs; members also make keys and use the playgrounds; admins manage keys and members; owners also manage credit.</p>
      {manages && (
        <form className="inline-form" onSubmit={add}>
          <label htmlFor="member-user">User id</label>
          <input id="member-user" required maxLength={64} value={userId} onChange={(e) => setUserId(e.target.value)} placeholder="user_…" />
          <label htmlFor="member-role">Role</label>
          <select id="member-role" value={role} onChange={(e) => setRole(e.target.value as ProjectRole)}>
            {ROLES.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
          <button type="submit">Add member</button>
        </form>
      )}
      <ErrorBox error={changeError ?? error} />
      {loading && <Loading what="members" />}
      {data && members.length === 0 && <Empty title="No members yet" />}
      {members.length > 0 && (
        <TableWrap label="Members">
          <table>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Name</th>
                <th scope="col">Role</th>
                <th scope="col">Since</th>
                {manages && <th scope="col">Remove</th>}
              </tr>
            </thead>
            <tbody>
              {members.map((m) => (
                <tr key={m.user_id}>
                  <td>{m.email}</td>
                  <td>{m.name ?? '—'}</td>
                  <td>
                    {manages ? (
                      <select
                        aria-label={`Role of ${m.email}`}
                        value={m.role}
                        onChange={(e) => void change(() => api('PATCH', `/admin/projects/${projectId}/members/${m.user_id}`, { body: { role: e.target.value } }))}
                      >
                        {ROLES.map((r) => (
                          <option key={r}>{r}</option>
                        ))}
                      </select>
                    ) : (
                      m.role
                    )}
                  </td>
                  <td>{time(m.created_at)}</td>
                  {manages && (
                    <td>
                      <button type="button" className="secondary" onClick={() => void change(() => del(`/admin/projects/${projectId}/members/${m.user_id}`))}>
                        Remove {m.email}
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}
