/** Files: upload (drag and drop, progress, the 100 MB limit checked first), list by purpose a page at a time, download, delete. */
import { useState, type DragEvent, type FormEvent } from 'react';
import { del, download, get, query } from '../lib/api.js';
import { bytes, time } from '../lib/format.js';
import type { FileObject, List } from '../lib/types.js';
import { uploadFile, uploadProblem } from '../lib/upload.js';
import { useApi } from '../lib/use-api.js';
import { Empty, ErrorBox, Loading, ProgressBar, TableWrap } from '../components/common.js';
import { ConfirmButton } from '../components/confirm.js';
import { NeedsProject } from '../shell.js';

const PURPOSES = ['batch', 'batch_output', 'fine-tune', 'assistants', 'user_data', 'vision', 'evals'];
const PAGE = 20;

export function FilesPage() {
  const [generation, setGeneration] = useState(0);
  return (
    <>
      <h1>Files</h1>
      <NeedsProject>
        <Upload onUploaded={() => setGeneration((g) => g + 1)} />
        <FileList generation={generation} />
      </NeedsProject>
    </>
  );
}

function Upload({ onUploaded }: { onUploaded: () => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [purpose, setPurpose] = useState('batch');
  const [progress, setProgress] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [dragging, setDragging] = useState(false);
  const choose = (chosen: File | null) => {
    setError(chosen ? uploadProblem(chosen) : null);
    setFile(chosen);
  };
  const drop = (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    choose(event.dataTransfer.files[0] ?? null);
  };
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!file) return;
    const problem = uploadProblem(file);
    if (problem) return setError(problem);
    setError(null);
    setProgress(0);
    try {
      await uploadFile(file, purpose, (fraction) => setProgress(fraction * 100));
      setFile(null);
      onUploaded();
    } catch (err) {
      setError(err);
    } finally {
      setProgress(null);
    }
  };
  return (
    <form className="upload" onSubmit={(e) => void submit(e)} aria-label="Upload a file">
      <div
        className={`dropzone${dragging ? ' dragging' : ''}`}
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={drop}
      >
        <label htmlFor="upload-file">Drop a file here, or choose one (at most 100 MB)</label>
        <input id="upload-file" type="file" onChange={(e) => choose(e.target.files?.[0] ?? null)} />
        {file && (
          <p className="sub">
            {file.name}, {bytes(file.size)}
          </p>
        )}
      </div>
      <label htmlFor="upload-purpose">Purpose</label>
      <select id="upload-purpose" value={purpose} onChange={(e) => setPurpose(e.target.value)}>
        {PURPOSES.filter((p) => p !== 'batch_output').map((p) => (
          <option key={p}>{p}</option>
        ))}
      </select>
      <button type="submit" disabled={!file || progress !== null}>
        Upload
      </button>
      {progress !== null && <ProgressBar value={progress} label="Upload progress" />}
      <ErrorBox error={error} />
    </form>
  );
}

function FileList({ generation }: { generation: number }) {
  const [purpose, setPurpose] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const after = cursors[cursors.length - 1];
  const { data, error, loading, reload } = useApi(
    (signal) => get<List<FileObject>>(`/v1/files${query({ purpose, limit: PAGE, after, order: 'desc' })}`, signal),
    [purpose, after, generation],
  );
  const [actionError, setActionError] = useState<unknown>(null);
  return (
    <section aria-labelledby="files-heading">
      <h2 id="files-heading">Files</h2>
      <label className="inline">
        <span>Purpose</span>
        <select
          value={purpose}
          onChange={(e) => {
            setPurpose(e.target.value);
            setCursors([]);
          }}
        >
          <option value="">All</option>
          {PURPOSES.map((p) => (
            <option key={p}>{p}</option>
          ))}
        </select>
      </label>
      {loading && !data && <Loading what="files" />}
      <ErrorBox error={error} />
      <ErrorBox error={actionError} />
      {data && data.data.length === 0 && <Empty title="No files here">Upload a JSONL file with purpose “batch” to run a batch.</Empty>}
      {data && data.data.length > 0 && (
        <TableWrap label="Files">
          <table>
            <thead>
              <tr>
                <th scope="col">File</th>
                <th scope="col">Purpose</th>
                <th scope="col">Size</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {data.data.map((f) => (
                <tr key={f.id}>
                  <td>
                    {f.filename}
                    <div className="sub">
                      <code>{f.id}</code>
                    </div>
                  </td>
                  <td>{f.purpose}</td>
                  <td>{bytes(f.bytes)}</td>
                  <td>{time(f.created_at)}</td>
                  <td className="row-actions">
                    <button type="button" className="secondary" onClick={() => void download(`/v1/files/${f.id}/content`, f.filename).catch(setActionError)}>
                      Download <span className="visually-hidden">{f.filename}</span>
                    </button>
                    <ConfirmButton
                      label={`Delete ${f.filename}`}
                      title="Delete this file?"
                      message={`${f.filename} (${f.id}) will be deleted. Batches already running keep their input.`}
                      confirmLabel="Delete file"
                      danger
                      onConfirm={async () => {
                        await del(`/v1/files/${f.id}`);
                        reload();
                      }}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <div className="actions">
        <button type="button" className="secondary" disabled={cursors.length === 0} onClick={() => setCursors((c) => c.slice(0, -1))}>
          Newer
        </button>
        <button type="button" className="secondary" disabled={!data?.has_more} onClick={() => data?.last_id && setCursors((c) => [...c, data.last_id!])}>
          Older
        </button>
      </div>
    </section>
  );
}
