/**
 * Usage: requests, tokens or cost over a date range, by model, key or (operators)
 * project, from the server's per-bucket aggregation; totals per group; CSV export; the
 * balance of the project in view.
 */
import { useMemo, useState } from 'react';
import { get, query, saveBlob } from '../lib/api.js';
import { count, time, usd } from '../lib/format.js';
import type { ApiKey, CreditGrant, List, Project, RequestSummary, UsageReport } from '../lib/types.js';
import { useApi } from '../lib/use-api.js';
import { bucketWidthFor, toCsv, toSeries, totalsOf, type Metric } from '../lib/usage.js';
import { isOperator, useSession } from '../session.js';
import { Empty, ErrorBox, Loading, TableWrap } from '../components/common.js';
import { TimeChart } from '../components/chart.js';
import { RequestTable } from './requests.js';

const DAY = 86_400;
const dateInput = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);
const fromDateInput = (value: string) => Math.floor(Date.parse(`${value}T00:00:00Z`) / 1000);

const METRICS: Array<{ value: Metric; label: string; unit: string }> = [
  { value: 'requests', label: 'Requests', unit: 'requests' },
  { value: 'tokens', label: 'Tokens', unit: 'tokens' },
  { value: 'cost_usd', label: 'Cost', unit: 'USD' },
];

/** What a null group means, by grouping: calls made with no key, or naming no end user. */
const NULL_GROUPS: Partial<Record<string, string>> = { key: 'no key (operator)', end_user: 'no end user' };
const GROUP_NAMES: Record<string, string> = { model: 'model', key: 'API key', tag: 'tag', end_user: 'end user', project: 'project' };

export function UsagePage() {
  const state = useSession();
  const operator = isOperator(state);
  const today = Math.floor(Date.now() / 1000 / DAY) * DAY;
  const [start, setStart] = useState(dateInput(today - 6 * DAY));
  const [end, setEnd] = useState(dateInput(today));
  const [groupBy, setGroupBy] = useState<'model' | 'key' | 'tag' | 'end_user' | 'project'>('model');
  const [metric, setMetric] = useState<Metric>('requests');

  const startTime = fromDateInput(start);
  const endTime = fromDateInput(end) + DAY;
  const width = bucketWidthFor(startTime, endTime);
  const scope = operator ? (state.projectId ?? null) : null;
  const path = operator
    ? `/admin/usage${query({ start_time: startTime, end_time: endTime, bucket_width: width, group_by: groupBy, project_id: scope })}`
    : `/v1/usage${query({ start_time: startTime, end_time: endTime, bucket_width: width, group_by: groupBy === 'project' ? 'model' : groupBy })}`;
  const report = useApi((signal) => get<UsageReport>(path, signal), [path]);
  const names = useGroupNames(operator, state.projectId);
  const label = (group: string | null) => (group === null ? (NULL_GROUPS[groupBy] ?? 'all') : (names.get(group) ?? group));

  const unit = METRICS.find((m) => m.value === metric)!.unit;
  const series = useMemo(() => (report.data ? toSeries(report.data, metric, label) : null), [report.data, metric, names]);
  const totals = report.data ? totalsOf(report.data, label) : null;

  const exportCsv = () => {
    if (report.data) saveBlob(new Blob([toCsv(report.data, label)], { type: 'text/csv' }), `sluice-usage-${start}-to-${end}.csv`);
  };

  return (
    <>
      <h1>Usage</h1>
      <Balance operator={operator} projectId={state.projectId} />
      <form className="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          <span>From</span>
          <input type="date" value={start} max={end} onChange={(e) => e.target.value && setStart(e.target.value)} />
        </label>
        <label>
          <span>To</span>
          <input type="date" value={end} min={start} onChange={(e) => e.target.value && setEnd(e.target.value)} />
        </label>
        <label>
          <span>Group by</span>
          <select value={groupBy} onChange={(e) => setGroupBy(e.target.value as typeof groupBy)}>
            <option value="model">Model</option>
            <option value="key">API key</option>
            <option value="tag">Tag</option>
            <option value="end_user">End user</option>
            {operator && !state.projectId && <option value="project">Project</option>}
          </select>
        </label>
        <label>
          <span>Show</span>
          <select value={metric} onChange={(e) => setMetric(e.target.value as Metric)}>
            {METRICS.map((m) => (
              <option key={m.value} value={m.value}>
                {m.label}
              </option>
            ))}
          </select>
        </label>
        <button type="button" className="secondary" onClick={exportCsv} disabled={!report.data}>
          Export CSV
        </button>
      </form>
      <p className="hint">
        {operator ? (state.projectId ? 'The chosen project' : 'Every project') : 'Your project'}, in {width === '1d' ? 'daily' : width === '1h' ? 'hourly' : 'one-minute'} buckets (UTC).
        {groupBy === 'tag' && ' A call counts under each of its tags; calls without tags are not shown.'}
      </p>
      {report.loading && <Loading what="usage" />}
      <ErrorBox error={report.error} />
      {totals && (
        <dl className="totals" aria-label="Totals for the range">
          <div>
            <dt>Requests</dt>
            <dd data-testid="total-requests">{count(totals.all.requests)}</dd>
          </div>
          <div>
            <dt>Tokens</dt>
            <dd>{count(totals.all.inputTokens + totals.all.outputTokens)}</dd>
          </div>
          <div>
            <dt>Cached input tokens</dt>
            <dd data-testid="total-cached-tokens">{count(totals.all.cachedInputTokens)}</dd>
          </div>
          <div>
            <dt>Cost</dt>
            <dd>{usd(totals.all.costUsd)}</dd>
          </div>
        </dl>
      )}
      {totals && totals.rows.length === 0 && <Empty title="No usage in this range">Calls made with this project's keys appear here within seconds; try the Playground.</Empty>}
      {series && totals && totals.rows.length > 0 && (
        <>
          <TimeChart series={series} label={`${unit} over time by ${GROUP_NAMES[groupBy]}`} unit={unit} />
          <GroupTable rows={totals.rows} groupBy={GROUP_NAMES[groupBy]!} />
        </>
      )}
      {state.projectId && <RecentCalls startTime={startTime} endTime={endTime} />}
    </>
  );
}

/** The last calls of the range from the request log, each linked to its detail and session. */
function RecentCalls({ startTime, endTime }: { startTime: number; endTime: number }) {
  const path = `/v1/requests${query({ limit: 10, since: startTime, until: endTime })}`;
  const { data, error } = useApi((signal) => get<List<RequestSummary>>(path, signal), [path]);
  return (
    <section aria-labelledby="recent-calls-heading">
      <h2 id="recent-calls-heading">Recent calls</h2>
      <ErrorBox error={error} />
      {data && data.data.length === 0 && <p className="hint">No call in this range is in the request log.</p>}
      {data && data.data.length > 0 && <RequestTable requests={data.data} caption="The range's last calls, newest first" />}
      <p>
        <a href="#/requests">All requests, with filters</a>
      </p>
    </section>
  );
}

function GroupTable({ rows, groupBy }: { rows: ReturnType<typeof totalsOf>['rows']; groupBy: string }) {
  return (
    <TableWrap label="Usage totals">
      <table>
        <caption>Totals by {groupBy}</caption>
        <thead>
          <tr>
            <th scope="col">{groupBy}</th>
            <th scope="col">Requests</th>
            <th scope="col">Input tokens</th>
            <th scope="col">Of which cached</th>
            <th scope="col">Of which cache writes</th>
            <th scope="col">Output tokens</th>
            <th scope="col">Cost</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(([name, t]) => (
            <tr key={name}>
              <td>{name}</td>
              <td>{count(t.requests)}</td>
              <td>{count(t.inputTokens)}</td>
              <td>{count(t.cachedInputTokens)}</td>
              <td>{count(t.cacheWriteTokens)}</td>
              <td>{count(t.outputTokens)}</td>
              <td>{usd(t.costUsd)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

function Balance({ operator, projectId }: { operator: boolean; projectId: string | null }) {
  const path = operator ? (projectId ? `/admin/projects/${projectId}` : null) : '/v1/project';
  const { data, error } = useApi((signal) => (path ? get<Project>(path, signal) : Promise.resolve(null)), [path]);
  const grants = useApi((signal) => (path ? get<List<CreditGrant>>(`${path}/credits`, signal) : Promise.resolve(null)), [path]);
  if (!path) return null;
  return (
    <>
      <ErrorBox error={error ?? grants.error} />
      {data && (
        <p className="balance-line">
          Balance of <strong>{data.name}</strong>: <span className="balance">{usd(data.balance_usd)}</span>
        </p>
      )}
      {grants.data && grants.data.data.length > 0 && (
        <details>
          <summary>Credit grants ({grants.data.data.length})</summary>
          <ul>
            {grants.data.data.map((g) => (
              <li key={g.id}>
                {time(g.created_at)}: {g.amount_usd >= 0 ? '+' : ''}
                {usd(g.amount_usd)}
                {g.reason ? `, ${g.reason}` : ''}
              </li>
            ))}
          </ul>
        </details>
      )}
    </>
  );
}

/** Display names for key ids and project ids (the report carries ids). */
function useGroupNames(operator: boolean, projectId: string | null): Map<string, string> {
  const keys = useApi(
    (signal) => (operator && projectId ? get<{ data: ApiKey[] }>(`/admin/projects/${projectId}/keys`, signal) : Promise.resolve({ data: [] })),
    [operator, projectId],
  );
  const projects = useApi((signal) => (operator ? get<List<Project>>('/admin/projects?limit=100', signal) : Promise.resolve({ object: 'list' as const, data: [] })), [operator]);
  return useMemo(() => {
    const names = new Map<string, string>();
    for (const k of keys.data?.data ?? []) names.set(k.id, `${k.name} (${k.prefix}…)`);
    for (const p of projects.data?.data ?? []) names.set(p.id, p.name);
    return names;
  }, [keys.data, projects.data]);
}
