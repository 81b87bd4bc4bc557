/** The console shell: sign-in, then the navigation and the page the hash names. */
import { useCallback, useEffect, useMemo, useState } from 'react';
import { ApiError, del, get, setApiContext } from './lib/api.js';
import type { Session } from './lib/types.js';
import { useRoute } from './lib/route.js';
import { SessionContext, type SessionState } from './session.js';
import { Loading } from './components/common.js';
import { SignIn } from './pages/sign-in.js';
import { Shell } from './shell.js';

const PROJECT_KEY = 'sluice.console.project';

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [chosen, setChosen] = useState<string | null>(() => localStorage.getItem(PROJECT_KEY));
  const route = useRoute();

  useEffect(() => {
    get<Session>('/session').then(
      (s) => setSession(s),
      (err: unknown) => {
        if (!(err instanceof ApiError && err.status === 401)) console.error(err);
        setSession(null);
      },
    );
  }, []);

  // A user who is no operator acts in one of their projects: the one chosen, else the first.
  const ownProjects = session?.role === 'user' && !session.user?.operator ? (session.projects ?? []) : null;
  const userProject = ownProjects && (ownProjects.some((p) => p.id === chosen) ? chosen : (ownProjects[0]?.id ?? null));
  const projectId = session?.role === 'developer' ? session.project_id : ownProjects ? userProject : chosen;
  setApiContext({ csrfToken: session?.csrf_token ?? null, projectId: session?.role === 'developer' ? null : projectId });

  const chooseProject = useCallback((id: string | null) => {
    if (id) localStorage.setItem(PROJECT_KEY, id);
    else localStorage.removeItem(PROJECT_KEY);
    setChosen(id);
  }, []);
  const signOut = useCallback(async () => {
    await del('/session');
    setSession(null);
    window.location.hash = '';
  }, []);

  const state = useMemo<SessionState | null>(
    () => (session ? { session, projectId, chooseProject, signOut } : null),
    [session, projectId, chooseProject, signOut],
  );

  if (session === undefined) return <Loading what="the console" />;
  if (!state) return <SignIn onSignedIn={setSession} />;
  return (
    <SessionContext.Provider value={state}>
      <Shell route={route} />
    </SessionContext.Provider>
  );
}
