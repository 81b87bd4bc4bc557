/** The embeddings (vector preview, similarity of two texts) and moderation (category bars) playgrounds. */
import { useState, type FormEvent } from 'react';
import { post } from '../lib/api.js';
import type { CatalogModel } from '../lib/types.js';
import { cosineSimilarity, preview, rankedScores } from '../lib/vectors.js';
import { Empty, ErrorBox, ProgressBar } from '../components/common.js';
import { CodeBox } from './playground-code.js';

const servedOn = (models: CatalogModel[], route: string) => models.filter((m) => m.ready && m.routes.includes(route));

export function EmbeddingsPlayground({ models }: { models: CatalogModel[] }) {
  const choices = servedOn(models, '/v1/embeddings');
  const [model, setModel] = useState('');
  const [first, setFirst] = useState('');
  const [second, setSecond] = useState('');
  const [result, setResult] = useState<{ vectors: number[][]; similarity: number } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const chosen = model || choices[0]?.id || '';
  const body = { model: chosen, input: [first, second] };
  const send = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      const answer = await post<{ data: Array<{ embedding: number[]; index: number }> }>('/v1/embeddings', body);
      const vectors = [...answer.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
      setResult({ vectors, similarity: cosineSimilarity(vectors[0]!, vectors[1]!) });
    } catch (err) {
      setError(err);
    }
  };
  if (choices.length === 0) return <Empty title="No embedding model is ready">The Models page says how to pull one or point one at an engine.</Empty>;
  return (
    <div className="playground">
      <form onSubmit={(e) => void send(e)}>
        <label htmlFor="emb-model">Model</label>
        <select id="emb-model" value={chosen} onChange={(e) => setModel(e.target.value)}>
          {choices.map((m) => (
            <option key={m.id}>{m.id}</option>
          ))}
        </select>
        <label htmlFor="emb-first">First text</label>
        <textarea id="emb-first" rows={2} required value={first} onChange={(e) => setFirst(e.target.value)} />
        <label htmlFor="emb-second">Second text</label>
        <textarea id="emb-second" rows={2} required value={second} onChange={(e) => setSecond(e.target.value)} />
        <div className="actions">
          <button type="submit">Embed both</button>
        </div>
      </form>
      <ErrorBox error={error} />
      {result && (
        <section aria-labelledby="emb-result">
          <h2 id="emb-result">Result</h2>
          <p data-testid="similarity">Cosine similarity: {result.similarity.toFixed(4)}</p>
          {result.vectors.map((v, i) => (
            <p key={i} className="sub">
              Text {i + 1}: {v.length} dimensions <code>{preview(v)}</code>
            </p>
          ))}
        </section>
      )}
      <CodeBox route="/embeddings" body={body} />
    </div>
  );
}

export function ModerationPlayground({ models }: { models: CatalogModel[] }) {
  const choices = servedOn(models, '/v1/moderations');
  const [model, setModel] = useState('');
  const [text, setText] = useState('');
  const [result, setResult] = useState<{ flagged: boolean; scores: Array<[string, number]> } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const chosen = model || choices[0]?.id || '';
  const body = { model: chosen, input: text };
  const send = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      const answer = await post<{ results: Array<{ flagged: boolean; category_scores: Record<string, number> }> }>('/v1/moderations', body);
      const first = answer.results[0]!;
      setResult({ flagged: first.flagged, scores: rankedScores(first.category_scores) });
    } catch (err) {
      setError(err);
    }
  };
  if (choices.length === 0) return <Empty title="No moderation model is ready">The Models page says how to pull one or point one at an engine.</Empty>;
  return (
    <div className="playground">
      <form onSubmit={(e) => void send(e)}>
        <label htmlFor="mod-model">Model</label>
        <select id="mod-model" value={chosen} onChange={(e) => setModel(e.target.value)}>
          {choices.map((m) => (
            <option key={m.id}>{m.id}</option>
          ))}
        </select>
        <label htmlFor="mod-text">Text</label>
        <textarea id="mod-text" rows={3} required value={text} onChange={(e) => setText(e.target.value)} />
        <div className="actions">
          <button type="submit">Moderate</button>
        </div>
      </form>
      <ErrorBox error={error} />
      {result && (
        <section aria-labelledby="mod-result">
          <h2 id="mod-result">{result.flagged ? 'Flagged' : 'Not flagged'}</h2>
          <ul className="bars">
            {result.scores.map(([category, score]) => (
              <li key={category}>
                <span>
                  {category} <span className="sub">{score.toFixed(3)}</span>
                </span>
                <ProgressBar value={score * 100} label={`${category} score`} />
              </li>
            ))}
          </ul>
        </section>
      )}
      <CodeBox route="/moderations" body={body} />
    </div>
  );
}
