/**
 * Requests: the project's calls from the request log, newest first, a page at a time,
 * filtered by key, model, status, tag, session, time and cost; each links to its detail
 * and its session.
 */
import { useState, type FormEvent } from 'react';
import { get } from '../lib/api.js';
import { count, time, usd } from '../lib/format.js';
import { duration, NO_FILTERS, requestsPath, requestTone, type RequestFilters } from '../lib/requests.js';
import type { List, RequestSummary } from '../lib/types.js';
import { useApi } from '../lib/use-api.js';
import { Empty, ErrorBox, Loading, StatusChip, TableWrap } from '../components/common.js';
import { Pager, useCursor } from '../components/pager.js';
import { NeedsProject } from '../shell.js';

const PAGE_SIZE = 25;

export const requestHref = (id: string) => `#/requests/${encodeURIComponent(id)}`;
export const sessionHref = (id: string) => `#/sessions/${encodeURIComponent(id)}`;

export function RequestsPage() {
  return (
    <>
      <h1>Requests</h1>
      <NeedsProject>
        <RequestLog />
      </NeedsProject>
    </>
  );
}

function RequestLog() {
  const [draft, setDraft] = useState<RequestFilters>(NO_FILTERS);
  const [filters, setFilters] = useState<RequestFilters>(NO_FILTERS);
  const cursor = useCursor();
  const path = requestsPath(filters, PAGE_SIZE, cursor.after);
  const page = useApi((signal) => get<List<RequestSummary>>(path, signal), [path]);
  const apply = (event: FormEvent) => {
    event.preventDefault();
    cursor.reset();
    setFilters(draft);
  };
  const clear = () => {
    cursor.reset();
    setDraft(NO_FILTERS);
    setFilters(NO_FILTERS);
  };
  return (
    <>
      <FilterForm draft={draft} onChange={setDraft} onSubmit={apply} onClear={clear} />
      {page.loading && !page.data && <Loading what="requests" />}
      <ErrorBox error={page.error} />
      {page.data && page.data.data.length === 0 && (
        <Empty title="No requests match">Calls made with this project's keys appear here within seconds of answering; clear the filters to see them all.</Empty>
      )}
      {page.data && page.data.data.length > 0 && <RequestTable requests={page.data.data} caption="Calls, newest first" />}
      <Pager cursor={cursor} page={page.data} label="requests" />
    </>
  );
}

const FIELDS: Array<{ name: keyof RequestFilters; label: string; type?: string; placeholder?: string }> = [
  { name: 'key_id', label: 'Key id', placeholder: 'key_…' },
  { name: 'model', label: 'Model' },
  { name: 'tag', label: 'Tag' },
  { name: 'session_id', label: 'Session' },
  { name: 'since', label: 'From (UTC)', type: 'datetime-local' },
  { name: 'until', label: 'Until (UTC)', type: 'datetime-local' },
  { name: 'min_cost_usd', label: 'Cost above (USD)', type: 'number' },
];

function FilterForm(props: { draft: RequestFilters; onChange: (next: RequestFilters) => void; onSubmit: (event: FormEvent) => void; onClear: () => void }) {
  const { draft, onChange } = props;
  const set = (name: keyof RequestFilters, value: string) => onChange({ ...draft, [name]: value });
  return (
    <form className="filters" aria-label="Filter requests" onSubmit={props.onSubmit}>
      {FIELDS.map((f) => (
        <label key={f.name}>
          <span>{f.label}</span>
          <input
            name={f.name}
            type={f.type ?? 'text'}
            value={draft[f.name]}
            placeholder={f.placeholder}
            min={f.type === 'number' ? 0 : undefined}
            step={f.type === 'number' ? 'any' : undefined}
            onChange={(e) => set(f.name, e.target.value)}
          />
        </label>
      ))}
      <label>
        <span>Status</span>
        <select name="status" value={draft.status} onChange={(e) => set('status', e.target.value)}>
          <option value="">Any</option>
          <option value="error">Any error (400 or more)</option>
          {[200, 400, 401, 402, 403, 404, 429, 500, 502, 503, 504].map((s) => (
            <option key={s} value={String(s)}>
              {s}
            </option>
          ))}
        </select>
      </label>
      <button type="submit">Apply</button>
      <button type="button" className="secondary" onClick={props.onClear}>
        Clear
      </button>
    </form>
  );
}

/** Calls as a table; each id links to its detail, each session to its calls. */
export function RequestTable({ requests, caption }: { requests: readonly RequestSummary[]; caption: string }) {
  return (
    <TableWrap label={caption}>
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Request</th>
            <th scope="col">Time (UTC)</th>
            <th scope="col">Model</th>
            <th scope="col">Status</th>
            <th scope="col">Tokens in / cached / out</th>
            <th scope="col">Cost</th>
            <th scope="col">Total time</th>
            <th scope="col">Session</th>
          </tr>
        </thead>
        <tbody>
          {requests.map((r) => (
            <tr key={r.id} data-testid="request-row">
              <td>
                <a href={requestHref(r.id)}>
                  <code>{r.id}</code>
                </a>
              </td>
              <td>{time(r.created_at)}</td>
              <td>{r.model && r.model !== r.model_requested ? `${r.model_requested} → ${r.model}` : r.model_requested}</td>
              <td>
                <StatusChip status={r.error_code ? `${r.status} ${r.error_code}` : String(r.status)} tone={requestTone(r.status)} />
              </td>
              <td>
                {count(r.usage.input_tokens)} / {count(r.usage.cached_input_tokens)} / {count(r.usage.output_tokens)}
              </td>
              <td>{usd(r.cost_usd)}</td>
              <td>{duration(r.latency_ms.total)}</td>
              <td>{r.session_id ? <a href={sessionHref(r.session_id)}>{r.session_id}</a> : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
