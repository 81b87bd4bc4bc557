/** Batches: status chips and progress bars, refreshed every two seconds while any batch can still move; create from an uploaded file. */
import { useEffect, useState, type FormEvent } from 'react';
import { get, post, query } from '../lib/api.js';
import { time } from '../lib/format.js';
import { anyActive, progressPercent, statusTone } from '../lib/batches.js';
import type { Batch, FileObject, List } from '../lib/types.js';
import { useApi, usePolling } from '../lib/use-api.js';
import { Empty, ErrorBox, Loading, ProgressBar, StatusChip } from '../components/common.js';
import { NeedsProject } from '../shell.js';

export const POLL_MS = 2_000;

export function BatchesPage() {
  return (
    <>
      <h1>Batches</h1>
      <NeedsProject>
        <CreateBatch />
        <BatchList />
      </NeedsProject>
    </>
  );
}

function BatchList() {
  const { data, error, loading, reload } = useApi((signal) => get<List<Batch>>('/v1/batches?limit=50', signal), []);
  const active = data ? anyActive(data.data) : false;
  usePolling(active, loading, reload, POLL_MS);
  useEffect(() => {
    window.addEventListener(BATCH_CREATED, reload);
    return () => window.removeEventListener(BATCH_CREATED, reload);
  }, [reload]);
  return (
    <section aria-labelledby="batch-list-heading">
      <h2 id="batch-list-heading">Recent batches</h2>
      {loading && !data && <Loading what="batches" />}
      <ErrorBox error={error} />
      {data && data.data.length === 0 && <Empty title="No batches yet">Upload a JSONL file with purpose “batch” on the Files page, then create a batch from it above.</Empty>}
      {data && data.data.length > 0 && (
        <ul className="cards">
          {data.data.map((b) => (
            <li key={b.id} className="card" data-testid="batch-card">
              <div className="card-head">
                <a href={`#/batches/${encodeURIComponent(b.id)}`}>
                  <code>{b.id}</code>
                </a>
                <StatusChip status={b.status} tone={statusTone(b.status)} />
              </div>
              <ProgressBar value={progressPercent(b.request_counts)} label={`Progress of ${b.id}`} />
              <p className="sub">
                {b.request_counts.completed} completed, {b.request_counts.failed} failed of {b.request_counts.total} · {b.endpoint} · created {time(b.created_at)}
              </p>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

const BATCH_CREATED = 'sluice:batch-created';

function CreateBatch() {
  const files = useApi((signal) => get<List<FileObject>>(`/v1/files${query({ purpose: 'batch', limit: 100 })}`, signal), []);
  const [fileId, setFileId] = useState('');
  const [endpoint, setEndpoint] = useState('/v1/chat/completions');
  const [error, setError] = useState<unknown>(null);
  const create = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      await post<Batch>('/v1/batches', { input_file_id: fileId, endpoint, completion_window: '24h' });
      window.dispatchEvent(new Event(BATCH_CREATED));
    } catch (err) {
      setError(err);
    }
  };
  const choices = files.data?.data ?? [];
  return (
    <form className="inline-form" onSubmit={(e) => void create(e)} aria-label="Create a batch">
      <label htmlFor="batch-file">Input file</label>
      <select id="batch-file" required value={fileId} onChange={(e) => setFileId(e.target.value)}>
        <option value="">{choices.length === 0 ? 'No batch files: upload one on Files' : 'Choose…'}</option>
        {choices.map((f) => (
          <option key={f.id} value={f.id}>
            {f.filename} ({f.id})
          </option>
        ))}
      </select>
      <label htmlFor="batch-endpoint">Endpoint</label>
      <select id="batch-endpoint" value={endpoint} onChange={(e) => setEndpoint(e.target.value)}>
        <option value="/v1/chat/completions">/v1/chat/completions</option>
        <option value="/v1/embeddings">/v1/embeddings</option>
        <option value="/v1/moderations">/v1/moderations</option>
        <option value="/v1/responses">/v1/responses</option>
        <option value="/v1/completions">/v1/completions</option>
        <option value="/v1/systemone">/v1/systemone</option>
      </select>
      <button type="submit">Create batch</button>
      <ErrorBox error={error} />
    </form>
  );
}
