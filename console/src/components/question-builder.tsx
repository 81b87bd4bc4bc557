/**
 * The decision playground's question builder: add noul, choice and score questions, name
 * them, and edit their instructions and criteria (a noul's yes/no texts, a choice's
 * options with descriptions, a score's levels low end first). Every control is labelled
 * with its question's name and position, so a screen reader can tell the rows apart.
 */
import { draftQuestion, MAX_CRITERIA, MAX_QUESTIONS, nextQuestionName, type DraftQuestion, type QuestionKind } from '../lib/decision.js';

const KIND_LABELS: Record<QuestionKind, string> = { noul: 'Yes/no (noul)', choice: 'Choice', score: 'Score' };

export function QuestionBuilder({ questions, onChange }: { questions: DraftQuestion[]; onChange: (next: DraftQuestion[]) => void }) {
  const update = (i: number, patch: Partial<DraftQuestion>) => onChange(questions.map((q, j) => (j === i ? { ...q, ...patch } : q)));
  const add = (type: QuestionKind) => onChange([...questions, draftQuestion(type, nextQuestionName(questions))]);
  return (
    <fieldset className="questions">
      <legend>Questions</legend>
      {questions.map((q, i) => (
        <QuestionEditor key={i} index={i} question={q} update={(patch) => update(i, patch)} remove={() => onChange(questions.filter((_, j) => j !== i))} />
      ))}
      <div className="actions" role="group" aria-label="Add a question">
        {(['noul', 'choice', 'score'] as const).map((type) => (
          <button key={type} type="button" className="secondary" disabled={questions.length >= MAX_QUESTIONS} onClick={() => add(type)}>
            Add {KIND_LABELS[type].toLowerCase()} question
          </button>
        ))}
      </div>
    </fieldset>
  );
}

interface EditorProps {
  index: number;
  question: DraftQuestion;
  update: (patch: Partial<DraftQuestion>) => void;
  remove: () => void;
}

function QuestionEditor({ index, question: q, update, remove }: EditorProps) {
  const id = `q${index}`;
  const who = `question ${index + 1}`;
  return (
    <div className="question card">
      <div className="card-head">
        <strong>
          {index + 1}. {KIND_LABELS[q.type]}
        </strong>
        <button type="button" className="secondary" onClick={remove} aria-label={`Remove ${who}`}>
          Remove
        </button>
      </div>
      <label htmlFor={`${id}-name`}>Name of {who}</label>
      <input id={`${id}-name`} value={q.name} required onChange={(e) => update({ name: e.target.value })} />
      <label htmlFor={`${id}-instructions`}>Instructions for {who}</label>
      <textarea id={`${id}-instructions`} rows={2} value={q.instructions} onChange={(e) => update({ instructions: e.target.value })} />
      {q.type === 'noul' && (
        <>
          <label htmlFor={`${id}-yes`}>What a yes means (optional)</label>
          <input id={`${id}-yes`} value={q.yes} onChange={(e) => update({ yes: e.target.value })} />
          <label htmlFor={`${id}-no`}>What a no means (optional)</label>
          <input id={`${id}-no`} value={q.no} onChange={(e) => update({ no: e.target.value })} />
        </>
      )}
      {q.type === 'choice' && <Options question={q} who={who} update={update} />}
      {q.type === 'score' && <Levels question={q} who={who} update={update} />}
    </div>
  );
}

function Options({ question: q, who, update }: { question: DraftQuestion; who: string; update: (patch: Partial<DraftQuestion>) => void }) {
  const set = (i: number, patch: Partial<DraftQuestion['options'][number]>) => update({ options: q.options.map((o, j) => (j === i ? { ...o, ...patch } : o)) });
  return (
    <>
      <ol className="criteria" aria-label={`Options of ${who}`}>
        {q.options.map((o, i) => (
          <li key={i} className="criterion">
            <input aria-label={`Option ${i + 1} of ${who}`} placeholder="option" value={o.name} onChange={(e) => set(i, { name: e.target.value })} />
            <input aria-label={`Description of option ${i + 1} of ${who} (optional)`} placeholder="description (optional)" value={o.description} onChange={(e) => set(i, { description: e.target.value })} />
            <button type="button" className="secondary" aria-label={`Remove option ${i + 1} of ${who}`} disabled={q.options.length <= 1} onClick={() => update({ options: q.options.filter((_, j) => j !== i) })}>
              ×
            </button>
          </li>
        ))}
      </ol>
      <button type="button" className="secondary add" disabled={q.options.length >= MAX_CRITERIA} onClick={() => update({ options: [...q.options, { name: '', description: '' }] })}>
        Add an option to {who}
      </button>
    </>
  );
}

function Levels({ question: q, who, update }: { question: DraftQuestion; who: string; update: (patch: Partial<DraftQuestion>) => void }) {
  return (
    <>
      <ol className="criteria" start={0} aria-label={`Levels of ${who}, low end first`}>
        {q.levels.map((level, i) => (
          <li key={i} className="criterion">
            <input aria-label={`Level ${i} of ${who}${i === 0 ? ' (low end)' : ''}`} placeholder={i === 0 ? 'lowest level' : 'level'} value={level} onChange={(e) => update({ levels: q.levels.map((l, j) => (j === i ? e.target.value : l)) })} />
            <button type="button" className="secondary" aria-label={`Remove level ${i} of ${who}`} disabled={q.levels.length <= 1} onClick={() => update({ levels: q.levels.filter((_, j) => j !== i) })}>
              ×
            </button>
          </li>
        ))}
      </ol>
      <button type="button" className="secondary add" disabled={q.levels.length >= MAX_CRITERIA} onClick={() => update({ levels: [...q.levels, ''] })}>
        Add a level to {who}
      </button>
    </>
  );
}
