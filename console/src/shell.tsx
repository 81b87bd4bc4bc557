/** The signed-in layout: header (who, which project, sign out), navigation, and the page. */
import type { ReactNode } from 'react';
import type { Route } from './lib/route.js';
import { isOperator, useSession } from './session.js';
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

/** `operator`: shown to operator sessions only (the page reads the admin API). */
const PAGES: Array<{ page: string; label: string; operator?: true }> = [
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
];

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
        <span className="who">{operator ? 'Operator' : 'Developer'}</span>
        {operator && <ProjectPicker />}
        <button type="button" className="secondary" onClick={() => void state.signOut()}>
          Sign out
        </button>
      </header>
      <nav aria-label="Console pages" className="sidebar">
        <ul>
          {PAGES.filter((p) => operator || !p.operator).map(({ page, label }) => (
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
