/**
 * Projects and API keys. Operators list every project with its balance, create projects,
 * grant credit and manage the chosen project's keys; a developer sees their own project's
 * balance (keys are created by an operator, as through the API).
 */
import { useState, type FormEvent } from 'react';
import { get, post } from '../lib/api.js';
import { time, usd } from '../lib/format.js';
import type { List, Project } from '../lib/types.js';
import { useApi } from '../lib/use-api.js';
import { isOperator, roleInProject, useSession } from '../session.js';
import { Empty, ErrorBox, Loading, TableWrap } from '../components/common.js';
import { PROJECTS_CHANGED } from '../components/project-picker.js';
import { KeysPanel } from './keys.js';

export function ProjectsPage() {
  const state = useSession();
  if (!isOperator(state)) {
    // A user's members and above make keys (a viewer only reads).
    const makesKeys = state.session.role === 'user' && state.projectId !== null && roleInProject(state) !== 'viewer';
    return (
      <>
        <OwnProject />
        {makesKeys && state.projectId && <KeysPanel projectId={state.projectId} />}
      </>
    );
  }
  return (
    <>
      <h1>Projects</h1>
      <ProjectList />
      {state.projectId ? <KeysPanel projectId={state.projectId} /> : <p className="hint">Choose a project (Manage, or the list at the top) to see its keys.</p>}
    </>
  );
}

function OwnProject() {
  const { data, error, loading } = useApi((signal) => get<Project>('/v1/project', signal), []);
  return (
    <>
      <h1>Your project</h1>
      {loading && <Loading what="your project" />}
      <ErrorBox error={error} />
      {data && (
        <dl className="facts">
          <dt>Name</dt>
          <dd>{data.name}</dd>
          <dt>Project id</dt>
          <dd>
            <code>{data.id}</code>
          </dd>
          <dt>Balance</dt>
          <dd className="balance">{usd(data.balance_usd)}</dd>
        </dl>
      )}
      <p className="hint">API keys are created and revoked by an operator; the Usage page shows what this project has spent.</p>
    </>
  );
}

function ProjectList() {
  const { projectId, chooseProject } = useSession();
  const { data, error, loading, reload } = useApi((signal) => get<List<Project>>('/admin/projects?limit=100', signal), []);
  const [name, setName] = useState('');
  const [createError, setCreateError] = useState<unknown>(null);
  const create = async (event: FormEvent) => {
    event.preventDefault();
    setCreateError(null);
    try {
      const project = await post<Project>('/admin/projects', { name });
      setName('');
      reload();
      window.dispatchEvent(new Event(PROJECTS_CHANGED));
      chooseProject(project.id);
    } catch (err) {
      setCreateError(err);
    }
  };
  return (
    <section aria-labelledby="projects-heading">
      <h2 id="projects-heading">All projects</h2>
      <form className="inline-form" onSubmit={(e) => void create(e)}>
        <label htmlFor="project-name">New project name</label>
        <input id="project-name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
        <button type="submit">Create project</button>
      </form>
      <ErrorBox error={createError} />
      {loading && !data && <Loading what="projects" />}
      <ErrorBox error={error} />
      {data && data.data.length === 0 && <Empty title="No projects yet">Create one above; each project has its own keys, credit, files and batches.</Empty>}
      {data && data.data.length > 0 && (
        <TableWrap label="Projects">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Balance</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {data.data.map((p) => (
                <tr key={p.id} className={p.id === projectId ? 'selected' : undefined}>
                  <td>
                    {p.name}
                    <div className="sub">
                      <code>{p.id}</code>
                    </div>
                  </td>
                  <td>{usd(p.balance_usd)}</td>
                  <td>{time(p.created_at)}</td>
                  <td className="row-actions">
                    <button type="button" className="secondary" onClick={() => chooseProject(p.id)} aria-label={`Manage ${p.name}`}>
                      Manage
                    </button>
                    <GrantCredit project={p} onGranted={reload} />
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

function GrantCredit({ project, onGranted }: { project: Project; onGranted: () => void }) {
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const [error, setError] = useState<unknown>(null);
  const grant = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      await post(`/admin/projects/${project.id}/credits`, { amount_usd: Number(amount), ...(reason ? { reason } : {}) });
      setAmount('');
      setReason('');
      onGranted();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form className="grant" onSubmit={(e) => void grant(e)}>
      <label htmlFor={`grant-${project.id}`} className="visually-hidden">
        Credit to grant to {project.name}, USD
      </label>
      <input id={`grant-${project.id}`} type="number" step="0.01" required placeholder="USD" value={amount} onChange={(e) => setAmount(e.target.value)} />
      <label htmlFor={`reason-${project.id}`} className="visually-hidden">
        Reason for the grant to {project.name}
      </label>
      <input id={`reason-${project.id}`} maxLength={500} placeholder="Reason" value={reason} onChange={(e) => setReason(e.target.value)} />
      <button type="submit" className="secondary">
        Grant
      </button>
      <ErrorBox error={error} />
    </form>
  );
}
