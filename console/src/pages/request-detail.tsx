/**
 * One call from the request log: what was asked and what served it, the attempts on a
 * timeline, the latency split, the cost held against the cost settled, and the request
 * and answer pretty-printed when the project logs bodies.
 */
import type { ReactNode } from 'react';
import { get } from '../lib/api.js';
import { count, time, usd } from '../lib/format.js';
import { attemptTimeline, duration, holdAndSettlement, prettyBody, requestTone } from '../lib/requests.js';
import type { RequestBody, RequestDetail } from '../lib/types.js';
import { useApi } from '../lib/use-api.js';
import { ErrorBox, Loading, StatusChip } from '../components/common.js';
import { NeedsProject } from '../shell.js';
import { sessionHref } from './requests.js';

export function RequestDetailPage({ id }: { id: string }) {
  return (
    <>
      <p>
        <a href="#/requests">← All requests</a>
      </p>
      <h1>
        Request <code>{id}</code>
      </h1>
      <NeedsProject>
        <RequestView id={id} />
      </NeedsProject>
    </>
  );
}

function RequestView({ id }: { id: string }) {
  const { data: request, error, loading } = useApi((signal) => get<RequestDetail>(`/v1/requests/${encodeURIComponent(id)}`, signal), [id]);
  if (loading && !request) return <Loading what="the request" />;
  if (!request) return <ErrorBox error={error} />;
  return (
    <>
      <div className="card-head">
        <StatusChip status={request.error_code ? `${request.status} ${request.error_code}` : String(request.status)} tone={requestTone(request.status)} />
        <span>
          {request.route} · {request.wire}
          {request.stream ? ' · streamed' : ''}
        </span>
      </div>
      <Facts request={request} />
      <Attempts request={request} />
      <Cost request={request} />
      {request.body_logged ? <Bodies id={request.id} /> : <p className="hint">This project does not log bodies, so this call's request and answer were not kept.</p>}
    </>
  );
}

function Facts({ request: r }: { request: RequestDetail }) {
  const facts: Array<[string, ReactNode]> = [
    ['Time (UTC)', time(r.created_at)],
    ['Model asked for', r.model_requested],
    ['Served by', r.model ? `${r.model}${r.fallback ? ' (fallback)' : ''} on ${r.deployment ?? '—'}${r.provider ? ` (${r.provider})` : ''}` : '—'],
    ['Key', r.key_id ?? '—'],
    ['Session', r.session_id ? <a href={sessionHref(r.session_id)}>{r.session_id}</a> : '—'],
    ['End user', r.end_user ?? '—'],
    ['Tags', r.tags.length > 0 ? r.tags.join(', ') : '—'],
    ['Tools called', r.tools_called.length > 0 ? r.tools_called.join(', ') : '—'],
    ['Batch', r.batch_id ? <a href={`#/batches/${encodeURIComponent(r.batch_id)}`}>{r.batch_id}</a> : '—'],
    ['Tokens', `${count(r.usage.input_tokens)} in (${count(r.usage.cached_input_tokens)} cached), ${count(r.usage.output_tokens)} out`],
    ['Waiting for credit', duration(r.latency_ms.credit_wait)],
    ['First byte', duration(r.latency_ms.first_byte)],
    ['Engine', duration(r.latency_ms.engine)],
    ['Total', duration(r.latency_ms.total)],
  ];
  return (
    <dl className="facts" data-testid="request-facts">
      {facts.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function Attempts({ request }: { request: RequestDetail }) {
  const bars = attemptTimeline(request.attempts, request.latency_ms.total);
  return (
    <section aria-labelledby="attempts-heading">
      <h2 id="attempts-heading">Attempts</h2>
      {bars.length === 0 ? (
        <p className="hint">No engine was called (the call was refused before, or served in-process).</p>
      ) : (
        <ol className="timeline" aria-label={`Attempts over the call's ${duration(request.latency_ms.total)}`}>
          {bars.map((bar, i) => (
            <li key={i} data-testid="attempt">
              <span className="timeline-label">{bar.label}</span>
              <span className="timeline-track" aria-hidden="true">
                <span className={`timeline-bar timeline-${bar.outcome}`} style={{ marginLeft: `${bar.offsetPct}%`, width: `${bar.widthPct}%` }} />
              </span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function Cost({ request }: { request: RequestDetail }) {
  const { hold, settled, released } = holdAndSettlement(request);
  return (
    <section aria-labelledby="cost-heading">
      <h2 id="cost-heading">Cost</h2>
      <dl className="totals" data-testid="request-cost">
        <div>
          <dt>Held before the call</dt>
          <dd>{hold === null ? '—' : usd(hold)}</dd>
        </div>
        <div>
          <dt>Settled</dt>
          <dd>{settled === null ? '—' : usd(settled)}</dd>
        </div>
        <div>
          <dt>Released to the balance</dt>
          <dd>{released === null ? '—' : usd(released)}</dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd>{usd(request.cost_usd)}</dd>
        </div>
      </dl>
    </section>
  );
}

function Bodies({ id }: { id: string }) {
  const { data, error, loading } = useApi((signal) => get<RequestBody>(`/v1/requests/${encodeURIComponent(id)}/body`, signal), [id]);
  return (
    <section aria-labelledby="bodies-heading">
      <h2 id="bodies-heading">Request and answer</h2>
      {loading && !data && <Loading what="the bodies" />}
      <ErrorBox error={error} />
      {data && (
        <>
          <p className="hint">
            {data.mode === 'redacted' ? 'Redacted: credentials and secrets were removed before the body was kept.' : 'As sent and answered.'}
            {data.truncated ? ' Cut short: the body was larger than the log keeps.' : ''}
          </p>
          <h3 id="request-body-heading">Request</h3>
          <pre className="code" tabIndex={0} aria-labelledby="request-body-heading" data-testid="request-body">
            {prettyBody(data.request)}
          </pre>
          <h3 id="answer-body-heading">Answer</h3>
          <pre className="code" tabIndex={0} aria-labelledby="answer-body-heading" data-testid="answer-body">
            {prettyBody(data.response)}
          </pre>
        </>
      )}
    </section>
  );
}
