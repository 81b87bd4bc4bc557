/**
 * Who is signed in, and (for an operator) the project the project-scoped pages act in.
 * The CSRF token and project travel to the API client through setApiContext.
 */
import { createContext, useContext } from 'react';
import type { ProjectRole, Session } from './lib/types.js';

export interface SessionState {
  session: Session;
  /** The project the /v1 pages act in: the developer's own, or the operator's choice (null: none chosen). */
  projectId: string | null;
  chooseProject(id: string | null): void;
  signOut(): Promise<void>;
}

export const SessionContext = createContext<SessionState | null>(null);

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession outside the signed-in app');
  return state;
}

export const isOperator = (state: SessionState): boolean => state.session.role === 'operator' || (state.session.role === 'user' && state.session.user?.operator === true);

/** The signed-in user's role in the chosen project (null: not a user's session, or an operator's). */
export const roleInProject = (state: SessionState): ProjectRole | null =>
  state.session.projects?.find((p) => p.id === state.projectId)?.role ?? null;

/** Whether the session may manage the chosen project's keys and members: operators, and its admins and owners. */
export const managesProject = (state: SessionState): boolean => isOperator(state) || ['admin', 'owner'].includes(roleInProject(state) ?? '');
