/**
 * The llm scorer's pure parts: the documented prompt (letters A–Z then a–z), reading the
 * options' probabilities off a top-logprobs list (whitespace trimmed, case kept, missing
 * options given min(leftover / m, least listed p), renormalised), and the config it needs.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { decisionPrompt, llmScores, OPTION_LABELS, optionProbabilities } from '../../../src/inference/decision/llm-scores.js';
import { tempDir } from '../../helpers/databases.js';

const lp = (token: string, p: number) => ({ token, logprob: Math.log(p) });

describe('the llm prompt', () => {
  it('renders the state, the instructions and the lettered options as one user message', () => {
    const { messages, labels } = decisionPrompt('The sedan charges fast.', { type: 'choice', instructions: 'What is it about?', options: ['cars: vehicles', 'food'] });
    expect(labels).toEqual(['A', 'B']);
    expect(messages).toEqual([
      {
        role: 'user',
        content: 'Content:\nThe sedan charges fast.\n\nQuestion: What is it about?\n\nOptions:\nA. cars: vehicles\nB. food\n\nAnswer with the letter only.',
      },
    ]);
  });

  it('asks the type\'s default question without instructions; 32 options run into lower case', () => {
    const levels = Array.from({ length: 32 }, (_, i) => `level ${i}`);
    const { messages, labels } = decisionPrompt('x', { type: 'score', instructions: null, options: levels });
    expect(labels.join('')).toBe('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef');
    expect(messages[0]!.content).toContain('Question: Which level describes the content best?\n');
    expect(messages[0]!.content).toContain('\nf. level 31\n');
    expect(OPTION_LABELS).toHaveLength(52);
  });
});

describe('optionProbabilities', () => {
  it('renormalises the options present; " A" counts as "A"; other tokens and the other case are ignored', () => {
    const probs = optionProbabilities([lp('A', 0.5), lp(' A', 0.1), lp('B', 0.2), lp('b', 0.15), lp('The', 0.05)], ['A', 'B']);
    expect(probs[0]).toBeCloseTo(0.6 / 0.8, 12);
    expect(probs[1]).toBeCloseTo(0.2 / 0.8, 12);
  });

  it('a missing option gets the leftover mass shared by the missing ones, at most the least listed p', () => {
    // listed 0.9: leftover 0.1 over two missing options = 0.05 each, below the least listed 0.3
    let probs = optionProbabilities([lp('A', 0.6), lp('Z', 0.3)], ['A', 'B', 'C']);
    expect(probs.map((p) => +p.toFixed(12))).toEqual([0.6 / 0.7, 0.05 / 0.7, 0.05 / 0.7].map((p) => +p.toFixed(12)));
    // listed 0.5: leftover 0.5 for one missing option, capped at the least listed 0.1
    probs = optionProbabilities([lp('A', 0.4), lp('x', 0.1)], ['A', 'B']);
    expect(probs[0]).toBeCloseTo(0.4 / 0.5, 12);
    expect(probs[1]).toBeCloseTo(0.1 / 0.5, 12);
  });

  it('no option listed and no mass left: uniform', () => {
    expect(optionProbabilities([lp('x', 1)], ['A', 'B', 'C', 'D'])).toEqual([0.25, 0.25, 0.25, 0.25]);
  });
});

describe('llmScores', () => {
  it('asks each distinct question once, concurrently; P(yes) is P(first option)', async () => {
    const asked: string[] = [];
    let inFlight = 0;
    let most = 0;
    const run = async (messages: { content: string }[]) => {
      asked.push(messages[0]!.content);
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setImmediate(r));
      inFlight--;
      return [lp('A', 0.3), lp('B', 0.7)];
    };
    const q1 = { type: 'noul', instructions: 'Is it red?', options: ['Yes', 'No'] } as const;
    const q2 = { type: 'choice', instructions: null, options: ['x', 'y'] } as const;
    const scores = await llmScores(run, 'state', [q1, q2, { ...q1 }]);
    expect(asked).toHaveLength(2);
    expect(most).toBe(2);
    expect(scores.yes('ignored', q1)).toBeCloseTo(0.3, 12);
    expect(scores.options([], q2)[1]).toBeCloseTo(0.7, 12);
  });
});

describe('config', () => {
  const load = (yaml: string) => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'sluice.yaml'), yaml);
    return loadConfig({ DATA_DIR: dir }, dir);
  };

  it('an llm scorer needs decision.llm_model, a chat model', () => {
    expect(() => load('decision:\n  scorers:\n    zlm-v1-iab-classify-edge: llm\n')).toThrow(
      'decision.llm_model: required when a decision scorer is llm (the chat model it asks)',
    );
    expect(() => load('decision:\n  scorers:\n    zlm-v1-iab-classify-edge: llm\n  llm_model: deberta-v3-small\n')).toThrow(
      'decision.llm_model: deberta-v3-small is not a chat model',
    );
    expect(() => load('decision:\n  llm_model: gpt-9\n')).toThrow('decision.llm_model: unknown model id gpt-9');
    const config = load('decision:\n  scorers:\n    zlm-v1-iab-classify-edge: llm\n  llm_model: LFM2.5-1.2B-Instruct\n');
    expect(config.decision).toMatchObject({ scorers: { 'zlm-v1-iab-classify-edge': 'llm' }, llmModel: 'LFM2.5-1.2B-Instruct' });
    expect(load('').decision.llmModel).toBeNull();
  });
});
