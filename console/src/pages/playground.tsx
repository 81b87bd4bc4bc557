/** The chat playground: streams an answer from any ready chat model, shows its usage, and copies the exact request as code. */
import { useRef, useState, type FormEvent } from 'react';
import { apiFetch, get } from '../lib/api.js';
import { SseParser } from '../lib/sse.js';
import { snippet, type SnippetKind } from '../lib/snippets.js';
import type { CatalogModel, List } from '../lib/types.js';
import { useApi } from '../lib/use-api.js';
import { CopyButton, Empty, ErrorBox, Loading } from '../components/common.js';
import { NeedsProject } from '../shell.js';

export function PlaygroundPage() {
  return (
    <>
      <h1>Chat playground</h1>
      <NeedsProject>
        <Chat />
      </NeedsProject>
    </>
  );
}

function Chat() {
  const models = useApi((signal) => get<List<CatalogModel>>('/v1/catalog', signal), []);
  const chatModels = (models.data?.data ?? []).filter((m) => m.ready && m.routes.includes('/v1/chat/completions'));
  const [model, setModel] = useState('');
  const [system, setSystem] = useState('');
  const [prompt, setPrompt] = useState('');
  const [answer, setAnswer] = useState('');
  const [usage, setUsage] = useState<{ prompt_tokens: number; completion_tokens: number } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [streaming, setStreaming] = useState(false);
  const [kind, setKind] = useState<SnippetKind>('curl');
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

  if (models.loading && !models.data) return <Loading what="models" />;
  if (models.error) return <ErrorBox error={models.error} />;
  if (chatModels.length === 0) return <Empty title="No chat model is ready">The Models page says how to point one at an engine or pull one.</Empty>;
  const code = snippet(kind, window.location.origin, '/chat/completions', body);
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
      <section aria-labelledby="code-heading">
        <h2 id="code-heading">This request as code</h2>
        <div className="actions" role="group" aria-label="Language">
          {(['curl', 'node', 'python'] as const).map((k) => (
            <button key={k} type="button" className={k === kind ? '' : 'secondary'} aria-pressed={k === kind} onClick={() => setKind(k)}>
              {k === 'node' ? 'openai-node' : k === 'python' ? 'Python' : 'curl'}
            </button>
          ))}
          <CopyButton text={code} label="Copy code" />
        </div>
        <pre className="code">{code}</pre>
      </section>
    </div>
  );
}
