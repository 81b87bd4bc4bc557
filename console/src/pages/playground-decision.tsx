/**
 * The decision playground (POST /v1/systemone, System One's wire format): a state (text,
 * or JSON read as its JSON), the question builder, and the answers as probability bars
 * with their confidence, beside the exact request and response JSON.
 */
import { useState, type FormEvent } from 'react';
import { apiFetch } from '../lib/api.js';
import type { CatalogModel } from '../lib/types.js';
import { answerViews, buildDecisionRequest, draftQuestion, isDecisionModel, type AnswerView, type DecisionBody, type DraftQuestion } from '../lib/decision.js';
import { CopyButton, Empty, ErrorBox, ProgressBar } from '../components/common.js';
import { QuestionBuilder } from '../components/question-builder.js';
import { CodeBox } from './playground-code.js';

const FIRST_QUESTIONS: DraftQuestion[] = [{ ...draftQuestion('noul', 'q1'), instructions: 'Is this about Automotive?' }];

interface Exchange {
  body: DecisionBody;
  response: string;
  requestId: string | null;
  answers: AnswerView[];
}

export function DecisionPlayground({ models }: { models: CatalogModel[] }) {
  const choices = models.filter(isDecisionModel);
  const [model, setModel] = useState('');
  const [state, setState] = useState('');
  const [stateIsJson, setStateIsJson] = useState(false);
  const [questions, setQuestions] = useState<DraftQuestion[]>(FIRST_QUESTIONS);
  const [exchange, setExchange] = useState<Exchange | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const chosen = model || choices[0]?.id || '';
  const built = buildDecisionRequest(chosen, state, stateIsJson, questions);

  const send = async (event: FormEvent) => {
    event.preventDefault();
    if (!built.body) return;
    const body = built.body;
    setError(null);
    setExchange(null);
    setBusy(true);
    try {
      const response = await apiFetch('POST', '/v1/systemone', { body });
      const text = await response.text();
      setExchange({ body, response: text, requestId: response.headers.get('x-request-id'), answers: answerViews(body, JSON.parse(text)) });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  if (choices.length === 0) return <NoDecisionModel />;
  return (
    <div className="playground">
      <form onSubmit={(e) => void send(e)}>
        <label htmlFor="dec-model">Model</label>
        <select id="dec-model" value={chosen} onChange={(e) => setModel(e.target.value)}>
          {choices.map((m) => (
            <option key={m.id}>{m.id}</option>
          ))}
        </select>
        <StateBox state={state} isJson={stateIsJson} domain={chosen.includes('domain')} onState={setState} onIsJson={setStateIsJson} />
        <QuestionBuilder questions={questions} onChange={setQuestions} />
        {built.problem && state.trim() !== '' && (
          <p className="sub" role="status" data-testid="decision-problem">
            {built.problem}
          </p>
        )}
        <div className="actions">
          <button type="submit" disabled={busy || !built.body}>
            Decide
          </button>
        </div>
      </form>
      {busy && (
        <p className="loading" role="status">
          Deciding…
        </p>
      )}
      <ErrorBox error={error} />
      {exchange && <Answers exchange={exchange} />}
      {built.body && <CodeBox route="/systemone" body={built.body} />}
    </div>
  );
}

interface StateBoxProps {
  state: string;
  isJson: boolean;
  domain: boolean;
  onState: (state: string) => void;
  onIsJson: (isJson: boolean) => void;
}

function StateBox({ state, isJson, domain, onState, onIsJson }: StateBoxProps) {
  return (
    <>
      <label htmlFor="dec-state">State</label>
      <textarea id="dec-state" rows={4} required value={state} aria-describedby="dec-state-hint" onChange={(e) => onState(e.target.value)} />
      <p id="dec-state-hint" className="sub">
        The content every question is about{domain ? ' (for this model, a URL or domain)' : ''}.
      </p>
      <label className="check">
        <input type="checkbox" checked={isJson} onChange={(e) => onIsJson(e.target.checked)} /> Send the state as JSON (an object or array)
      </label>
    </>
  );
}

function NoDecisionModel() {
  return (
    <Empty title="No decision model is ready">
      <p>
        The decision route answers with the <code>zlm-*</code> packs. Pull one with <code>npm run sluice -- models pull zlm-v1-iab-classify-edge</code> (or{' '}
        <code>zlm-v1-moderation-edge</code>); the Models page shows what each one is missing.
      </p>
    </Empty>
  );
}

function Answers({ exchange }: { exchange: Exchange }) {
  const request = JSON.stringify(exchange.body, null, 2);
  return (
    <section aria-labelledby="dec-answers" data-testid="decision-answers">
      <h2 id="dec-answers">Answers</h2>
      <ul className="cards">
        {exchange.answers.map((a) => (
          <li key={a.name} className="card">
            <div className="card-head">
              <strong>{a.name}</strong>
              <span>{a.headline}</span>
            </div>
            <p className="sub">{a.confidence === null ? 'No confidence: System One returns none for yes/no questions.' : `Confidence ${a.confidence.toFixed(3)}`}</p>
            <ul className="bars">
              {a.bars.map((bar) => (
                <li key={bar.label}>
                  <span>
                    {bar.label} <span className="sub">{bar.probability.toFixed(3)}</span>
                  </span>
                  <ProgressBar value={bar.probability * 100} label={`${a.name}: ${bar.label}`} />
                </li>
              ))}
            </ul>
          </li>
        ))}
      </ul>
      <h3>Request</h3>
      <CopyButton text={request} label="Copy the request JSON" />
      <pre className="code" data-testid="decision-request">
        {request}
      </pre>
      <h3>Response</h3>
      {exchange.requestId && (
        <p className="sub">
          Request id <code>{exchange.requestId}</code>
        </p>
      )}
      <CopyButton text={exchange.response} label="Copy the response JSON" />
      <pre className="code" data-testid="decision-response">
        {exchange.response}
      </pre>
    </section>
  );
}
