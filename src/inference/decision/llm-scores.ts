/**
 * The decision route's `llm` zero-shot scorer, the way System One itself answers: a chat
 * model reads the state and one question with its options labelled by single letters,
 * and the answer is read from the next-token probabilities of those letters (never from
 * sampled text), renormalised over the options.
 *
 * The prompt (one user message, rendered by the model's chat template):
 *
 *     Content:
 *     <state>
 *
 *     Question: <instructions, or the type's default question>
 *
 *     Options:
 *     A. <option 1>
 *     B. <option 2>
 *     ...
 *
 *     Answer with the letter only.
 *
 * An upstream reports only its top alternatives. An option missing from them is given
 * min(leftover / m, p_min): leftover = 1 − the listed tokens' mass, shared by the m
 * missing options, and never more than the least likely listed token (it ranked below
 * every one of them); both bound its true probability from above.
 */
import type { ChatMessage, TokenLogprob } from '../../domain/models/inference-backend.port.js';
import { AppError } from '../../domain/shared/errors.js';
import { zeroShotQuestionKey, type ZeroShotQuestion, type ZeroShotScores } from '../../domain/decision/scorer.port.js';

/** Option labels, in order: one letter each, upper case then lower case (criteria and levels are at most 32). */
export const OPTION_LABELS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'.split('');

/** The question asked when a question has no instructions. */
const DEFAULT_QUESTION: Record<ZeroShotQuestion['type'], string> = {
  noul: 'Which option is true of the content?',
  choice: 'Which option describes the content best?',
  score: 'Which level describes the content best?',
};

/** The chat the model reads for one question about `state`, and the option labels in order. */
export function decisionPrompt(state: string, question: ZeroShotQuestion): { messages: ChatMessage[]; labels: string[] } {
  if (question.options.length > OPTION_LABELS.length) {
    throw new AppError('internal', `a zero-shot question has ${question.options.length} options; the llm scorer labels at most ${OPTION_LABELS.length}`);
  }
  const labels = OPTION_LABELS.slice(0, question.options.length);
  const options = question.options.map((text, i) => `${labels[i]}. ${text}`).join('\n');
  const asked = question.instructions ?? DEFAULT_QUESTION[question.type];
  const content = `Content:\n${state}\n\nQuestion: ${asked}\n\nOptions:\n${options}\n\nAnswer with the letter only.`;
  return { messages: [{ role: 'user', content }], labels };
}

/**
 * The options' probabilities from the next token's log-probabilities: tokens matched to
 * labels after trimming whitespace (" A" is "A"), case-sensitively (both cases label
 * options); missing options as the header says; renormalised to sum to 1.
 */
export function optionProbabilities(logprobs: readonly TokenLogprob[], labels: readonly string[]): number[] {
  const mass = new Map<string, number>();
  let listed = 0;
  let least = 1;
  for (const { token, logprob } of logprobs) {
    const p = Math.exp(logprob);
    if (!Number.isFinite(p)) continue;
    listed += p;
    least = Math.min(least, p);
    const label = token.trim();
    mass.set(label, (mass.get(label) ?? 0) + p);
  }
  const missing = labels.filter((l) => !mass.has(l)).length;
  const floor = missing === 0 ? 0 : Math.min(Math.max(0, 1 - listed) / missing, least);
  const weights = labels.map((l) => mass.get(l) ?? floor);
  const total = weights.reduce((a, b) => a + b, 0);
  // Nothing to tell the options apart (every one missing and nothing left over): uniform.
  return total > 0 ? weights.map((w) => w / total) : labels.map(() => 1 / labels.length);
}

/** Asks a chat model which of `candidates` comes next after `messages`; `stop` cancels the call. */
export type NextTokenRunner = (messages: ChatMessage[], candidates: readonly string[], stop: AbortSignal) => Promise<TokenLogprob[]>;

/**
 * Every question asked at once (an upstream serves them concurrently; a gguf model queues
 * them on its sequences). The first failure cancels the questions still in flight: the
 * request has failed, and they would hold the upstream until they finish.
 */
export async function llmScores(run: NextTokenRunner, state: string, questions: readonly ZeroShotQuestion[]): Promise<ZeroShotScores> {
  const distinct = new Map(questions.map((q) => [zeroShotQuestionKey(q), q]));
  const answers = new Map<string, number[]>();
  const stop = new AbortController();
  await Promise.all(
    [...distinct].map(async ([key, question]) => {
      const { messages, labels } = decisionPrompt(state, question);
      try {
        answers.set(key, optionProbabilities(await run(messages, labels, stop.signal), labels));
      } catch (err) {
        stop.abort();
        throw err;
      }
    }),
  );
  const answerTo = (question: ZeroShotQuestion): number[] => {
    const probs = answers.get(zeroShotQuestionKey(question));
    if (!probs) throw new AppError('internal', 'a zero-shot question was not asked');
    return probs;
  };
  return { options: (_texts, question) => answerTo(question), yes: (_text, question) => answerTo(question)[0]! };
}
