/** One batch: timestamps, live progress, output and error files, the error codes counted, cancel. */
import { useState } from 'react';
import { apiFetch, download, get, post } from '../lib/api.js';
import { time } from '../lib/format.js';
import { isTerminal, progressPercent, statusTone, summariseErrorCodes } from '../lib/batches.js';
import type { Batch } from '../lib/types.js';
import { useApi, usePolling } from '../lib/use-api.js';
import { ErrorBox, Loading, ProgressBar, StatusChip } from '../components/common.js';
import { ConfirmButton } from '../components/confirm.js';
import { NeedsProject } from '../shell.js';
import { POLL_MS } from './batches.js';

const TIMES: Array<[keyof Batch, string]> = [
  ['created_at', 'Created'],
  ['in_progress_at', 'In progress'],
  ['finalizing_at', 'Finalizing'],
  ['completed_at', 'Completed'],
  ['failed_at', 'Failed'],
  ['cancelling_at', 'Cancelling'],
  ['cancelled_at', 'Cancelled'],
  ['expired_at', 'Expired'],
  ['expires_at', 'Expires'],
];

export function BatchDetail({ id }: { id: string }) {
  return (
    <>
      <p>
        <a href="#/batches">← All batches</a>
      </p>
      <h1>
        Batch <code>{id}</code>
      </h1>
      <NeedsProject>
        <BatchView id={id} />
      </NeedsProject>
    </>
  );
}

function BatchView({ id }: { id: string }) {
  const { data: batch, error, loading, reload } = useApi((signal) => get<Batch>(`/v1/batches/${encodeURIComponent(id)}`, signal), [id]);
  const [actionError, setActionError] = useState<unknown>(null);
  const moving = batch ? !isTerminal(batch.status) : false;
  usePolling(moving, loading, reload, POLL_MS);
  if (loading && !batch) return <Loading what="the batch" />;
  if (!batch) return <ErrorBox error={error} />;
  const save = (fileId: string, name: string) => download(`/v1/files/${fileId}/content`, name).catch(setActionError);
  return (
    <>
      <ErrorBox error={error} />
      <ErrorBox error={actionError} />
      <div className="card-head">
        <StatusChip status={batch.status} tone={statusTone(batch.status)} />
        <span>{batch.endpoint}</span>
      </div>
      <ProgressBar value={progressPercent(batch.request_counts)} label="Batch progress" />
      <p data-testid="batch-counts">
        {batch.request_counts.completed} completed, {batch.request_counts.failed} failed of {batch.request_counts.total}
      </p>
      <div className="actions">
        {batch.output_file_id && (
          <button type="button" onClick={() => void save(batch.output_file_id!, `${batch.id}-output.jsonl`)}>
            Download output
          </button>
        )}
        {batch.error_file_id && (
          <button type="button" className="secondary" onClick={() => void save(batch.error_file_id!, `${batch.id}-errors.jsonl`)}>
            Download errors
          </button>
        )}
        {!isTerminal(batch.status) && batch.status !== 'cancelling' && (
          <ConfirmButton
            label="Cancel batch"
            title="Cancel this batch?"
            message="Lines not yet started will not run; finished lines stay in the output file."
            confirmLabel="Cancel batch"
            danger
            onConfirm={async () => {
              await post(`/v1/batches/${batch.id}/cancel`);
              reload();
            }}
          />
        )}
      </div>
      {batch.errors && batch.errors.data.length > 0 && (
        <section aria-labelledby="validation-heading">
          <h2 id="validation-heading">Input refused</h2>
          <ul>
            {batch.errors.data.map((e, i) => (
              <li key={i}>
                <code>{e.code}</code>
                {e.line ? ` (line ${e.line})` : ''}: {e.message}
              </li>
            ))}
          </ul>
        </section>
      )}
      {batch.error_file_id && <ErrorCodes fileId={batch.error_file_id} />}
      <h2>Timeline (UTC)</h2>
      <dl className="facts">
        {TIMES.filter(([field]) => batch[field] !== null).map(([field, label]) => (
          <div key={field}>
            <dt>{label}</dt>
            <dd>{time(batch[field] as number)}</dd>
          </div>
        ))}
      </dl>
    </>
  );
}

function ErrorCodes({ fileId }: { fileId: string }) {
  const { data, error } = useApi(async (signal) => summariseErrorCodes(await (await apiFetch('GET', `/v1/files/${fileId}/content`, { signal })).text()), [fileId]);
  return (
    <section aria-labelledby="codes-heading">
      <h2 id="codes-heading">Failed lines by error code</h2>
      <ErrorBox error={error} />
      {data && (
        <ul>
          {data.map(({ code, count }) => (
            <li key={code}>
              <code>{code}</code>: {count}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
