/** The signed-in layout: header (who, which project, sign out), navigation, and the page. */
import type { ReactNode } from 'react';
import type { Route } from './lib/route.js';
import { isOperator, managesProject, useSession, type SessionState } from './session.js';
import { ProjectPicker } from './components/project-picker.js';
import { ProjectsPage } from './pages/projects.js';
import { UsagePage } from './pages/usage.js';
import { BatchesPage } from './pages/batches.js';
import { BatchDetail } from './pages/batch-detail.js';
import { RequestsPage } from './pages/requests.js';
import { RequestDetailPage } from './pages/request-detail.js';
import { SessionPage } from './pages/request-session.js';
import { FilesPage } from './pages/files.js';
import { ModelsPage } from './pages/models.js';
import { PlaygroundPage } from './pages/playground.js';
import { AgentsPage } from './pages/agents.js';
import { GatewayPage } from './pages/gateway.js';
import { StorefrontPage } from './pages/storefront.js';
import { MembersPage } from './pages/members.js';
import { AuditPage } from './pages/audit.js';

/** `operator`: shown to operator sessions only (the page reads the admin API); `people`: to users' and operators' sessions; `manages`: to those who manage the project. */
const PAGES: Array<{ page: string; label: string; operator?: true; people?: true; manages?: true }> = [
  { page: 'home', label: 'Projects & keys' },
  { page: 'usage', label: 'Usage' },
  { page: 'requests', label: 'Requests' },
  { page: 'batches', label: 'Batches' },
  { page: 'files', label: 'Files' },
  { page: 'models', label: 'Models' },
  { page: 'playground', label: 'Playground' },
  { page: 'agents', label: 'Connect an agent' },
  { page: 'gateway', label: 'Gateway', operator: true },
  { page: 'storefront', label: 'Storefront', operator: true },
  { page: 'members', label: 'Members', people: true },
  { page: 'audit', label: 'Audit log', people: true, manages: true },
];

function shown(state: SessionState, p: (typeof PAGES)[number]): boolean {
  if (isOperator(state)) return true;
  if (p.operator) return false;
  if (p.people && state.session.role !== 'user') return false;
  return !p.manages || managesProject(state);
}

/** Who is signed in: the user's email and role in the chosen project, or the kind of session. */
function whoText(state: SessionState): string {
  const { session } = state;
  if (session.role !== 'user') return isOperator(state) ? 'Operator' : 'Developer';
  const role = session.projects?.find((p) => p.id === state.projectId)?.role;
  return `${session.user?.email ?? 'User'}${session.user?.operator ? ' (operator)' : role ? ` (${role})` : ''}`;
}

/** A user's choice among the projects they are a member of. */
function OwnProjectPicker() {
  const { session, projectId, chooseProject } = useSession();
  const projects = session.projects ?? [];
  return (
    <div className="picker">
      <label htmlFor="own-project-picker">Project</label>
      <select id="own-project-picker" value={projectId ?? ''} onChange={(e) => chooseProject(e.target.value || null)}>
        {projects.map((p) => (
          <option key={p.id} value={p.id}>
            {p.name}
          </option>
        ))}
      </select>
    </div>
  );
}

function pageFor(route: Route, operator: boolean): ReactNode {
  switch (route.page) {
    case 'gateway':
      return operator ? <GatewayPage /> : <ProjectsPage />;
    case 'storefront':
      return operator ? <StorefrontPage /> : <ProjectsPage />;
    case 'usage':
      return <UsagePage />;
    case 'requests':
      return route.id ? <RequestDetailPage id={route.id} /> : <RequestsPage />;
    case 'sessions':
      return route.id ? <SessionPage id={route.id} /> : <RequestsPage />;
    case 'batches':
      return route.id ? <BatchDetail id={route.id} /> : <BatchesPage />;
    case 'files':
      return <FilesPage />;
    case 'models':
      return <ModelsPage />;
    case 'playground':
      return <PlaygroundPage />;
    case 'agents':
      return <AgentsPage />;
    case 'members':
      return <MembersPage />;
    case 'audit':
      return <AuditPage />;
    default:
      return <ProjectsPage />;
  }
}

/** The navigation entry a route belongs to: a session is part of the request log. */
const navPage = (route: Route): string => (route.page === 'sessions' ? 'requests' : route.page);

export function Shell({ route }: { route: Route }) {
  const state = useSession();
  const operator = isOperator(state);
  return (
    <div className="layout">
      <header className="topbar">
        <a className="brand" href="#/">
          Sluice
        </a>
        <span className="who">{whoText(state)}</span>
        {operator && <ProjectPicker />}
        {!operator && state.session.role === 'user' && <OwnProjectPicker />}
        <button type="button" className="secondary" onClick={() => void state.signOut()}>
          Sign out
        </button>
      </header>
      <nav aria-label="Console pages" className="sidebar">
        <ul>
          {PAGES.filter((p) => shown(state, p)).map(({ page, label }) => (
            <li key={page}>
              <a href={`#/${page === 'home' ? '' : page}`} aria-current={navPage(route) === page ? 'page' : undefined}>
                {label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main className="content">{pageFor(route, operator)}</main>
    </div>
  );
}

/** Shown by project-scoped pages while an operator has chosen no project. */
export function NeedsProject({ children }: { children: ReactNode }) {
  const { projectId } = useSession();
  if (projectId) return <>{children}</>;
  return (
    <div className="empty">
      <p className="empty-title">Choose a project</p>
      <p>This page shows one project's objects: pick one in the project list at the top, or create one on the Projects page.</p>
    </div>
  );
}
