import { describe, expect, it } from 'vitest';
import { answerViews, buildDecisionRequest, draftQuestion, isDecisionModel, nextQuestionName, type DraftQuestion } from './decision.js';

const noul = (name: string, patch: Partial<DraftQuestion> = {}): DraftQuestion => ({ ...draftQuestion('noul', name), ...patch });

describe('the decision request', () => {
  it('builds the exact System One body from the three kinds of question', () => {
    const built = buildDecisionRequest('zlm-v1-iab-classify-edge', 'An electric sedan.', false, [
      noul('cars', { instructions: 'Is this about Automotive?' }),
      noul('safe', { yes: 'safe for ads', no: '' }),
      { ...draftQuestion('choice', 'topic'), options: [{ name: 'Automotive', description: '' }, { name: ' Sports ', description: 'games and teams' }] },
      { ...draftQuestion('score', 'tone'), instructions: 'How positive?', levels: ['negative', 'neutral', 'positive'] },
    ]);
    expect(built.problem).toBeNull();
    expect(built.body).toEqual({
      model: 'zlm-v1-iab-classify-edge',
      state: 'An electric sedan.',
      questions: {
        cars: { type: 'noul', instructions: 'Is this about Automotive?' },
        safe: { type: 'noul', criteria: { true: 'safe for ads' } },
        topic: { type: 'choice', criteria: { Automotive: null, Sports: 'games and teams' } },
        tone: { type: 'score', instructions: 'How positive?', criteria: ['negative', 'neutral', 'positive'] },
      },
    });
  });

  it('sends a JSON state as the object it parses to', () => {
    expect(buildDecisionRequest('m', '{"title": "x", "tags": [1]}', true, [noul('q1')]).body?.state).toEqual({ title: 'x', tags: [1] });
    expect(buildDecisionRequest('m', '"just a string"', true, [noul('q1')]).problem).toBe('A JSON state must be an object or an array');
    expect(buildDecisionRequest('m', '{nope', true, [noul('q1')]).problem).toMatch(/^The state is not valid JSON: /);
  });

  it('says what keeps a request from being sent', () => {
    const problem = (state: string, qs: DraftQuestion[]) => buildDecisionRequest('m', state, false, qs).problem;
    expect(problem(' ', [noul('q1')])).toBe('Write the state: the content every question is about');
    expect(problem('s', [])).toBe('Add a question');
    expect(problem('s', [noul(' ')])).toBe('Every question needs a name');
    expect(problem('s', [noul('a'), noul('a')])).toBe('Two questions are named a');
    expect(problem('s', [draftQuestion('choice', 'c')])).toBe('Every option of c needs a name');
    expect(problem('s', [{ ...draftQuestion('choice', 'c'), options: [{ name: 'x', description: '' }, { name: 'x ', description: '' }] }])).toBe('The options of c must have different names');
    expect(problem('s', [{ ...draftQuestion('score', 'l'), levels: ['low', ''] }])).toBe('Every level of l needs a text');
    expect(problem('s', Array.from({ length: 17 }, (_, i) => noul(`q${i}`)))).toBe('At most 16 questions');
  });

  it('names new questions q1, q2, … skipping names in use', () => {
    expect(nextQuestionName([])).toBe('q1');
    expect(nextQuestionName([noul('q2')])).toBe('q3');
    expect(nextQuestionName([noul('x'), noul('q3')])).toBe('q4');
  });
});

describe('the answers', () => {
  it('reads each answer in the request order, as bars with confidence, by name rather than parsed key order', () => {
    const body = buildDecisionRequest('m', 's', false, [
      noul('10', { yes: 'about cars' }),
      { ...draftQuestion('choice', 'topic'), options: [{ name: 'b', description: '' }, { name: 'a', description: '' }] },
      { ...draftQuestion('score', 'tone'), levels: ['low', 'mid', 'high'] },
    ]).body!;
    const response = JSON.parse(
      '{"model":"m","answers":{"10":{"type":"noul","noul":0.25},"topic":{"type":"choice","choice":"a","confidence":0.2,"probabilities":{"b":0.4,"a":0.6}},' +
        '"tone":{"type":"score","score":1.2,"confidence":0.5,"legend":{"0":"low","1":"mid","2":"high"},"probabilities":{"0":0.2,"1":0.4,"2":0.4}}},"usage":{"input_tokens":9,"output_tokens":0}}',
    );
    expect(answerViews(body, response)).toEqual([
      { name: '10', type: 'noul', headline: 'P(yes) = 0.250', confidence: null, bars: [{ label: 'Yes: about cars', probability: 0.25 }, { label: 'No', probability: 0.75 }] },
      { name: 'topic', type: 'choice', headline: 'Choice: a', confidence: 0.2, bars: [{ label: 'b', probability: 0.4 }, { label: 'a', probability: 0.6 }] },
      {
        name: 'tone',
        type: 'score',
        headline: 'Score 1.20 of 2',
        confidence: 0.5,
        bars: [
          { label: '0: low', probability: 0.2 },
          { label: '1: mid', probability: 0.4 },
          { label: '2: high', probability: 0.4 },
        ],
      },
    ]);
    expect(answerViews(body, { answers: {} })).toEqual([]);
  });

  it('offers the ready models served on /v1/systemone', () => {
    expect(isDecisionModel({ ready: true, routes: ['/v1/moderations', '/v1/systemone'] })).toBe(true);
    expect(isDecisionModel({ ready: false, routes: ['/v1/systemone'] })).toBe(false);
    expect(isDecisionModel({ ready: true, routes: ['/v1/chat/completions'] })).toBe(false);
  });
});
