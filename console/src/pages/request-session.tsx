/** One session from the request log (a coding agent's, a prompt cache key's, a response chain's): its calls in order, with tokens and cost summed. */
import { get } from '../lib/api.js';
import { count, time, usd } from '../lib/format.js';
import type { RequestSession } from '../lib/types.js';
import { useApi } from '../lib/use-api.js';
import { ErrorBox, Loading } from '../components/common.js';
import { NeedsProject } from '../shell.js';
import { RequestTable } from './requests.js';

export function SessionPage({ id }: { id: string }) {
  return (
    <>
      <p>
        <a href="#/requests">← All requests</a>
      </p>
      <h1>
        Session <code>{id}</code>
      </h1>
      <NeedsProject>
        <SessionView id={id} />
      </NeedsProject>
    </>
  );
}

function SessionView({ id }: { id: string }) {
  const { data: session, error, loading } = useApi((signal) => get<RequestSession>(`/v1/requests/sessions/${encodeURIComponent(id)}`, signal), [id]);
  if (loading && !session) return <Loading what="the session" />;
  if (!session) return <ErrorBox error={error} />;
  const { usage } = session;
  return (
    <>
      <dl className="totals" aria-label="Session totals" data-testid="session-totals">
        <div>
          <dt>Calls</dt>
          <dd>{count(session.requests)}</dd>
        </div>
        <div>
          <dt>Input tokens</dt>
          <dd>{count(usage.input_tokens)}</dd>
        </div>
        <div>
          <dt>Of which cached</dt>
          <dd>{count(usage.cached_input_tokens)}</dd>
        </div>
        <div>
          <dt>Output tokens</dt>
          <dd>{count(usage.output_tokens)}</dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd>{usd(session.cost_usd)}</dd>
        </div>
      </dl>
      <p className="hint">
        From {time(session.first_at)} to {time(session.last_at)} (UTC).
      </p>
      <RequestTable requests={session.data} caption="The session's calls, oldest first" />
    </>
  );
}
