/** The operator's project choice for the project-scoped pages (files, batches, playground). */
import { useEffect, useRef } from 'react';
import { get } from '../lib/api.js';
import type { List, Project } from '../lib/types.js';
import { useApi } from '../lib/use-api.js';
import { useSession } from '../session.js';

/** Dispatched on window when a project is created, so the list reloads. */
export const PROJECTS_CHANGED = 'sluice:projects-changed';

export function ProjectPicker() {
  const { projectId, chooseProject } = useSession();
  const { data, reload } = useApi((signal) => get<List<Project>>('/admin/projects?limit=100', signal), []);
  const projects = data?.data ?? [];
  const known = projectId !== null && projects.some((p) => p.id === projectId);
  useEffect(() => {
    window.addEventListener(PROJECTS_CHANGED, reload);
    return () => window.removeEventListener(PROJECTS_CHANGED, reload);
  }, [reload]);
  // A project remembered from an earlier visit that no longer exists is forgotten (checked
  // once, on the first list: later lists may lag behind a project just created).
  const checked = useRef(false);
  useEffect(() => {
    if (!data || checked.current) return;
    checked.current = true;
    if (projectId !== null && !known) chooseProject(null);
  }, [data, projectId, known, chooseProject]);
  return (
    <div className="picker">
      <label htmlFor="project-picker">Project</label>
      <select id="project-picker" value={known ? projectId : ''} onChange={(e) => chooseProject(e.target.value || null)}>
        <option value="">Choose…</option>
        {projects.map((p) => (
          <option key={p.id} value={p.id}>
            {p.name}
          </option>
        ))}
      </select>
    </div>
  );
}
