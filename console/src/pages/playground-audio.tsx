/**
 * The transcription playground: an audio file (or a clip recorded in the browser) sent
 * as multipart to /v1/audio/transcriptions with `response_format: verbose_json` and
 * segment timestamps, and the transcript shown segment by segment with its times.
 */
import { useState, type FormEvent } from 'react';
import { apiFetch } from '../lib/api.js';
import type { CatalogModel } from '../lib/types.js';
import { AUDIO_EXTENSIONS, audioProblem, readTranscript, timestamp, transcriptionFields, type Transcript } from '../lib/transcript.js';
import { Empty, ErrorBox, TableWrap } from '../components/common.js';
import { Recorder } from '../components/recorder.js';
import { CodeBox } from './playground-code.js';

const ROUTE = '/audio/transcriptions';

export function AudioPlayground({ models }: { models: CatalogModel[] }) {
  const speech = models.filter((m) => m.routes.includes(`/v1${ROUTE}`));
  const choices = speech.filter((m) => m.ready);
  const [model, setModel] = useState('');
  const [language, setLanguage] = useState('');
  const [prompt, setPrompt] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [transcript, setTranscript] = useState<Transcript | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const chosen = model || choices[0]?.id || '';
  const fields = transcriptionFields({ model: chosen, language, prompt });
  const problem = file ? audioProblem(file) : null;

  const send = async (event: FormEvent) => {
    event.preventDefault();
    if (!file || problem) return;
    setError(null);
    setTranscript(null);
    setBusy(true);
    try {
      const form = new FormData();
      form.append('file', file, file.name);
      for (const [name, value] of fields) form.append(name, value);
      const response = await apiFetch('POST', `/v1${ROUTE}`, { body: form });
      setTranscript(readTranscript(await response.json()));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  if (choices.length === 0) return <NoSpeechModel models={speech} />;
  return (
    <div className="playground">
      <form onSubmit={(e) => void send(e)}>
        <label htmlFor="asr-model">Model</label>
        <select id="asr-model" value={chosen} onChange={(e) => setModel(e.target.value)}>
          {choices.map((m) => (
            <option key={m.id}>{m.id}</option>
          ))}
        </select>
        <AudioSource file={file} problem={problem} onFile={setFile} />
        <label htmlFor="asr-language">Language (ISO-639-1, optional: detected when blank)</label>
        <input id="asr-language" value={language} maxLength={2} onChange={(e) => setLanguage(e.target.value)} />
        <label htmlFor="asr-prompt">Prompt (optional)</label>
        <textarea id="asr-prompt" rows={2} maxLength={4096} value={prompt} onChange={(e) => setPrompt(e.target.value)} />
        <div className="actions">
          <button type="submit" disabled={busy || !file || problem !== null}>
            Transcribe
          </button>
        </div>
      </form>
      {busy && (
        <p className="loading" role="status">
          Transcribing…
        </p>
      )}
      <ErrorBox error={error} />
      {transcript && <TranscriptView transcript={transcript} />}
      <CodeBox route={ROUTE} form={{ fields, fileName: file?.name ?? 'audio.wav' }} />
    </div>
  );
}

/** The file input, the recorder, and what will be sent (or why it cannot be). */
function AudioSource({ file, problem, onFile }: { file: File | null; problem: string | null; onFile: (file: File | null) => void }) {
  return (
    <>
      <label htmlFor="asr-file">Audio file</label>
      <input
        id="asr-file"
        type="file"
        accept={AUDIO_EXTENSIONS.map((e) => `.${e}`).join(',')}
        aria-describedby="asr-file-hint"
        onChange={(e) => onFile(e.target.files?.[0] ?? null)}
      />
      <p id="asr-file-hint" className="sub">
        {AUDIO_EXTENSIONS.join(', ')}; at most 25 MB and 10 minutes.
      </p>
      <Recorder onRecorded={onFile} />
      {file && !problem && (
        <p className="sub" data-testid="audio-file">
          Sending <code>{file.name}</code> ({(file.size / 1024).toFixed(1)} KB)
        </p>
      )}
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
    </>
  );
}

function NoSpeechModel({ models }: { models: CatalogModel[] }) {
  return (
    <Empty title="No speech model is ready">
      <p>
        Pull Whisper with <code>npm run sluice -- models pull whisper-tiny</code>, or bind the model to an engine with <code>models.whisper-tiny.base_url</code> in{' '}
        <code>sluice.yaml</code>.
      </p>
      {models.map((m) => (
        <p key={m.id} className="sub">
          <code>{m.id}</code>: {m.detail ?? 'not ready'}
        </p>
      ))}
    </Empty>
  );
}

function TranscriptView({ transcript }: { transcript: Transcript }) {
  return (
    <section aria-labelledby="asr-result" data-testid="transcript">
      <h2 id="asr-result">Transcript</h2>
      <p className="sub">
        {transcript.language && <>Language {transcript.language}. </>}
        {transcript.duration !== null && <>Duration {timestamp(transcript.duration)}. </>}
        {transcript.segments.length} segments.
      </p>
      <pre className="answer">{transcript.text.trim() || '(no speech recognised)'}</pre>
      {transcript.segments.length > 0 && (
        <TableWrap label="Segments">
          <table className="segments">
            <caption>Segments</caption>
            <thead>
              <tr>
                <th scope="col">Start</th>
                <th scope="col">End</th>
                <th scope="col">Text</th>
              </tr>
            </thead>
            <tbody>
              {transcript.segments.map((s) => (
                <tr key={s.id}>
                  <td>
                    <time dateTime={`PT${s.start}S`}>{timestamp(s.start)}</time>
                  </td>
                  <td>
                    <time dateTime={`PT${s.end}S`}>{timestamp(s.end)}</time>
                  </td>
                  <td>{s.text || '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </section>
  );
}
