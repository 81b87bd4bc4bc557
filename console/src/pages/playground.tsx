/**
 * Playgrounds: chat (streamed from any ready chat model, with its usage), embeddings,
 * moderation, and (loaded on first use) classification, transcription and decision; each
 * copies its exact request as code.
 */
import { lazy, Suspense, useRef, useState, type FormEvent } from 'react';
import { apiFetch, get } from '../lib/api.js';
import { SseParser } from '../lib/sse.js';
import type { CatalogModel, List } from '../lib/types.js';
import { useApi } from '../lib/use-api.js';
import { Empty, ErrorBox, Loading } from '../components/common.js';
import { NeedsProject } from '../shell.js';
import { CodeBox } from './playground-code.js';
import { EmbeddingsPlayground, ModerationPlayground } from './playground-extra.js';

const ClassifyPlayground = lazy(() => import('./playground-classify.js').then((m) => ({ default: m.ClassifyPlayground })));
const AudioPlayground = lazy(() => import('./playground-audio.js').then((m) => ({ default: m.AudioPlayground })));
const DecisionPlayground = lazy(() => import('./playground-decision.js').then((m) => ({ default: m.DecisionPlayground })));

const KINDS = [
  ['chat', 'Chat'],
  ['embeddings', 'Embeddings'],
  ['moderation', 'Moderation'],
  ['classification', 'Classification'],
  ['transcription', 'Transcription'],
  ['decision', 'Decision'],
] as const;

export function PlaygroundPage() {
  return (
    <>
      <h1>Playground</h1>
      <NeedsProject>
        <Playgrounds />
      </NeedsProject>
    </>
  );
}

function Playgrounds() {
  const [kind, setKind] = useState<(typeof KINDS)[number][0]>('chat');
  const models = useApi((signal) => get<List<CatalogModel>>('/v1/catalog', signal), []);
  if (models.loading && !models.data) return <Loading what="models" />;
  if (!models.data) return <ErrorBox error={models.error} />;
  return (
    <>
      <div className="actions" role="group" aria-label="Playground">
        {KINDS.map(([value, label]) => (
          <button key={value} type="button" className={value === kind ? '' : 'secondary'} aria-pressed={value === kind} onClick={() => setKind(value)}>
            {label}
          </button>
        ))}
      </div>
      {kind === 'chat' && <Chat models={models.data.data} />}
      {kind === 'embeddings' && <EmbeddingsPlayground models={models.data.data} />}
      {kind === 'moderation' && <ModerationPlayground models={models.data.data} />}
      <Suspense fallback={<Loading what="the playground" />}>
        {kind === 'classification' && <ClassifyPlayground models={models.data.data} />}
        {kind === 'transcription' && <AudioPlayground models={models.data.data} />}
        {kind === 'decision' && <DecisionPlayground models={models.data.data} />}
      </Suspense>
    </>
  );
}

function Chat({ models }: { models: CatalogModel[] }) {
  const chatModels = models.filter((m) => m.ready && m.routes.includes('/v1/chat/completions'));
  const [model, setModel] = useState('');
  const [system, setSystem] = useState('');
  const [prompt, setPrompt] = useState('');
  const [answer, setAnswer] = useState('');
  const [usage, setUsage] = useState<{ prompt_tokens: number; completion_tokens: number } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [streaming, setStreaming] = useState(false);
  const abort = useRef<AbortController | null>(null);

  const chosen = model || chatModels[0]?.id || '';
  const body = {
    model: chosen,
    messages: [...(system ? [{ role: 'system', content: system }] : []), { role: 'user', content: prompt }],
    stream: true,
    stream_options: { include_usage: true },
  };

  const send = async (event: FormEvent) => {
    event.preventDefault();
    setAnswer('');
    setUsage(null);
    setError(null);
    setStreaming(true);
    abort.current = new AbortController();
    try {
      const response = await apiFetch('POST', '/v1/chat/completions', { body, signal: abort.current.signal });
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      const parser = new SseParser();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const e of parser.push(value)) {
          if (e.delta) setAnswer((a) => a + e.delta);
          if (e.usage) setUsage(e.usage);
        }
      }
    } catch (err) {
      if (!(err instanceof DOMException && err.name === 'AbortError')) setError(err);
    } finally {
      setStreaming(false);
    }
  };

  if (chatModels.length === 0) return <Empty title="No chat model is ready">The Models page says how to point one at an engine or pull one.</Empty>;
  return (
    <div className="playground">
      <form onSubmit={(e) => void send(e)}>
        <label htmlFor="pg-model">Model</label>
        <select id="pg-model" value={chosen} onChange={(e) => setModel(e.target.value)}>
          {chatModels.map((m) => (
            <option key={m.id}>{m.id}</option>
          ))}
        </select>
        <label htmlFor="pg-system">System message (optional)</label>
        <textarea id="pg-system" rows={2} value={system} onChange={(e) => setSystem(e.target.value)} />
        <label htmlFor="pg-prompt">Message</label>
        <textarea id="pg-prompt" rows={4} required value={prompt} onChange={(e) => setPrompt(e.target.value)} />
        <div className="actions">
          <button type="submit" disabled={streaming || !prompt}>
            Send
          </button>
          {streaming && (
            <button type="button" className="secondary" onClick={() => abort.current?.abort()}>
              Stop
            </button>
          )}
        </div>
      </form>
      <section aria-labelledby="answer-heading" aria-live="polite">
        <h2 id="answer-heading">Answer</h2>
        <ErrorBox error={error} />
        <pre className="answer" data-testid="answer">
          {answer || (streaming ? '…' : '')}
        </pre>
        {usage && (
          <p className="sub" data-testid="usage">
            {usage.prompt_tokens} input tokens, {usage.completion_tokens} output tokens
          </p>
        )}
      </section>
      <CodeBox route="/chat/completions" body={body} />
    </div>
  );
}
