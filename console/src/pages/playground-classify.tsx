/**
 * The classification playground for the `zlm-*` classifier packs: a text (a URL or domain
 * for the domain classifier) sent as one user message to /v1/chat/completions, and the
 * JSON the model answers in the message content shown as taxonomy trees with score bars,
 * plus topics, keywords and user intent where the model answers them.
 */
import { useState, type FormEvent } from 'react';
import { post } from '../lib/api.js';
import type { CatalogModel } from '../lib/types.js';
import { classificationView, isClassifier, type ClassificationView } from '../lib/taxonomy.js';
import { Empty, ErrorBox, ProgressBar } from '../components/common.js';
import { ScoreTreeView } from '../components/score-tree.js';
import { CodeBox } from './playground-code.js';

interface ChatAnswer {
  choices: Array<{ message: { content: string } }>;
  usage?: { prompt_tokens: number };
}

export function ClassifyPlayground({ models }: { models: CatalogModel[] }) {
  const classifiers = models.filter(isClassifier);
  const choices = classifiers.filter((m) => m.ready);
  const [model, setModel] = useState('');
  const [text, setText] = useState('');
  const [result, setResult] = useState<{ view: ClassificationView; tokens: number | null } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const chosen = model || choices[0]?.id || '';
  const body = { model: chosen, messages: [{ role: 'user', content: text }] };
  const domain = chosen.includes('domain');

  const send = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setResult(null);
    setBusy(true);
    try {
      const answer = await post<ChatAnswer>('/v1/chat/completions', body);
      const content = answer.choices[0]?.message.content ?? '';
      setResult({ view: classificationView(JSON.parse(content)), tokens: answer.usage?.prompt_tokens ?? null });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  if (choices.length === 0) return <NoClassifier models={classifiers} />;
  return (
    <div className="playground">
      <form onSubmit={(e) => void send(e)}>
        <label htmlFor="cls-model">Model</label>
        <select id="cls-model" value={chosen} onChange={(e) => setModel(e.target.value)}>
          {choices.map((m) => (
            <option key={m.id}>{m.id}</option>
          ))}
        </select>
        <label htmlFor="cls-text">{domain ? 'URL or domain' : 'Text to classify'}</label>
        <textarea id="cls-text" rows={domain ? 1 : 4} required value={text} onChange={(e) => setText(e.target.value)} />
        <div className="actions">
          <button type="submit" disabled={busy || !text.trim()}>
            Classify
          </button>
        </div>
      </form>
      {busy && (
        <p className="loading" role="status">
          Classifying…
        </p>
      )}
      <ErrorBox error={error} />
      {result && <ClassificationResult view={result.view} tokens={result.tokens} />}
      <CodeBox route="/chat/completions" body={body} />
    </div>
  );
}

function ClassificationResult({ view, tokens }: { view: ClassificationView; tokens: number | null }) {
  return (
    <section aria-labelledby="cls-result" data-testid="classification">
      <h2 id="cls-result">Result</h2>
      {tokens !== null && <p className="sub">{tokens} input tokens. Scores are calibrated probabilities; a parent scores at least its best child.</p>}
      <div className="tree-grid">
        {view.trees.map((tree) => (
          <ScoreTreeView key={tree.id} tree={tree} />
        ))}
      </div>
      {view.topics.length > 0 && (
        <>
          <h3>Topics</h3>
          <ul className="bars">
            {view.topics.map((t) => (
              <li key={t.name}>
                <span>
                  {t.name} <span className="sub">{t.score.toFixed(4)}</span>
                </span>
                <ProgressBar value={t.score * 100} label={`Topic ${t.name} score`} />
              </li>
            ))}
          </ul>
        </>
      )}
      {view.keywords.length > 0 && (
        <p>
          <strong>Keywords:</strong> {view.keywords.join(', ')}
        </p>
      )}
      {view.intent && (
        <p>
          <strong>User intent:</strong> {view.intent.category} ({view.intent.score.toFixed(4)}), read from “{view.intent.name}”
        </p>
      )}
    </section>
  );
}

/** No zlm classifier can run: say which are configured, why not, and how to pull one. */
function NoClassifier({ models }: { models: CatalogModel[] }) {
  return (
    <Empty title="No zlm-* classifier is ready">
      <p>
        The classifier packs run in process on an embedding backbone. Pull one with <code>npm run sluice -- models pull zlm-v1-iab-classify-edge</code>{' '}
        (it fetches the <code>all-minilm-l6-v2</code> backbone if it is missing and builds the pack), or bind the model to an engine with{' '}
        <code>models.&lt;id&gt;.base_url</code> in <code>sluice.yaml</code>.
      </p>
      {models.length > 0 && (
        <ul>
          {models.map((m) => (
            <li key={m.id}>
              <code>{m.id}</code>: {m.detail ?? 'not ready'}
            </li>
          ))}
        </ul>
      )}
    </Empty>
  );
}
