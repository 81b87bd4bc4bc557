/** The decision request reader: every failure of a body listed, in FastAPI's 422 shape. */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/domain/shared/errors.js';
import { malformedJson, readDecisionRequest } from '../../../src/domain/decision/validation.js';
import { appErrorToHttp } from '../../../src/http/errors.js';

function detailOf(body: unknown) {
  try {
    readDecisionRequest(body);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    const http = appErrorToHttp(err as AppError);
    expect(http.status).toBe(422);
    return (http.body as { detail: unknown[] }).detail;
  }
  throw new Error('expected a 422');
}

const noul = { type: 'noul', instructions: 'Is it positive?' };

describe('readDecisionRequest', () => {
  it('reads a valid body: questions in request order, free-form texts kept, null criteria descriptions', () => {
    const req = readDecisionRequest({
      model: 'jev-latest',
      state: { text: 'hi' },
      questions: {
        b: noul,
        a: { type: 'choice', criteria: { yes: null, no: 'not at all' } },
        c: { type: 'score', instructions: ['rate'], criteria: ['low', { level: 'high' }] },
      },
    });
    expect(req.model).toBe('jev-latest');
    expect(req.state).toEqual({ text: 'hi' });
    expect([...req.questions.keys()]).toEqual(['b', 'a', 'c']);
    expect(req.questions.get('a')).toEqual({ type: 'choice', instructions: null, criteria: [{ name: 'yes', description: null }, { name: 'no', description: 'not at all' }] });
    expect(req.questions.get('c')).toEqual({ type: 'score', instructions: ['rate'], criteria: ['low', { level: 'high' }] });
    expect(req.questions.get('b')).toEqual({ type: 'noul', instructions: 'Is it positive?', criteria: null });
  });

  it('lists every missing field with the body as input', () => {
    expect(detailOf({})).toEqual([
      { type: 'missing', loc: ['body', 'state'], msg: 'Field required', input: {} },
      { type: 'missing', loc: ['body', 'model'], msg: 'Field required', input: {} },
      { type: 'missing', loc: ['body', 'questions'], msg: 'Field required', input: {} },
    ]);
  });

  it('a body that is not an object, and an absent body', () => {
    expect(detailOf([1])).toEqual([
      { type: 'model_attributes_type', loc: ['body'], msg: 'Input should be a valid dictionary or object to extract fields from', input: [1] },
    ]);
    expect(detailOf(null)).toEqual([{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }]);
  });

  it('null state: one error per member of the union; model not a string', () => {
    expect(detailOf({ state: null, model: 123, questions: { q: noul } })).toEqual([
      { type: 'string_type', loc: ['body', 'state', 'str'], msg: 'Input should be a valid string', input: null },
      { type: 'dict_type', loc: ['body', 'state', 'dict[str,any]'], msg: 'Input should be a valid dictionary', input: null },
      { type: 'list_type', loc: ['body', 'state', 'list[any]'], msg: 'Input should be a valid list', input: null },
      { type: 'string_type', loc: ['body', 'model'], msg: 'Input should be a valid string', input: 123 },
    ]);
  });

  it('empty and over-long questions', () => {
    expect(detailOf({ state: 's', model: 'm', questions: {} })).toEqual([
      {
        type: 'too_short',
        loc: ['body', 'questions'],
        msg: 'Dictionary should have at least 1 item after validation, not 0',
        input: {},
        ctx: { field_type: 'Dictionary', min_length: 1, actual_length: 0 },
      },
    ]);
    const seventeen = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`q${i}`, noul]));
    expect(detailOf({ state: 's', model: 'm', questions: seventeen })).toEqual([
      {
        type: 'too_long',
        loc: ['body', 'questions'],
        msg: 'Dictionary should have at most 16 items after validation, not 17',
        input: seventeen,
        ctx: { field_type: 'Dictionary', max_length: 16, actual_length: 17 },
      },
    ]);
    expect(detailOf({ state: 's', model: 'm', questions: 'q' })).toEqual([
      { type: 'dict_type', loc: ['body', 'questions'], msg: 'Input should be a valid dictionary', input: 'q' },
    ]);
  });

  it('question type: missing, unknown, and a question that is not an object — all listed', () => {
    expect(detailOf({ state: 's', model: 'm', questions: { a: { instructions: 'x' }, b: { type: 'rank' }, c: 3 } })).toEqual([
      { type: 'union_tag_not_found', loc: ['body', 'questions', 'a'], msg: "Unable to extract tag using discriminator 'type'", input: { instructions: 'x' }, ctx: { discriminator: "'type'" } },
      {
        type: 'union_tag_invalid',
        loc: ['body', 'questions', 'b'],
        msg: "Input tag 'rank' found using 'type' does not match any of the expected tags: 'noul', 'choice', 'score'",
        input: { type: 'rank' },
        ctx: { discriminator: "'type'", tag: 'rank', expected_tags: "'noul', 'choice', 'score'" },
      },
      { type: 'model_attributes_type', loc: ['body', 'questions', 'c'], msg: 'Input should be a valid dictionary or object to extract fields from', input: 3 },
    ]);
  });

  it('choice criteria: missing, empty, 33 entries, a bad description', () => {
    const thirtyThree = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`c${i}`, null]));
    expect(
      detailOf({
        state: 's',
        model: 'm',
        questions: {
          q1: { type: 'choice' },
          q2: { type: 'choice', criteria: {} },
          q3: { type: 'choice', criteria: thirtyThree },
          q4: { type: 'choice', criteria: { a: 5 } },
        },
      }),
    ).toEqual([
      { type: 'missing', loc: ['body', 'questions', 'q1', 'criteria'], msg: 'Field required', input: { type: 'choice' } },
      {
        type: 'too_short',
        loc: ['body', 'questions', 'q2', 'criteria'],
        msg: 'Dictionary should have at least 1 item after validation, not 0',
        input: {},
        ctx: { field_type: 'Dictionary', min_length: 1, actual_length: 0 },
      },
      {
        type: 'too_long',
        loc: ['body', 'questions', 'q3', 'criteria'],
        msg: 'Dictionary should have at most 32 items after validation, not 33',
        input: thirtyThree,
        ctx: { field_type: 'Dictionary', max_length: 32, actual_length: 33 },
      },
      { type: 'string_type', loc: ['body', 'questions', 'q4', 'criteria', 'a', 'str'], msg: 'Input should be a valid string', input: 5 },
      { type: 'dict_type', loc: ['body', 'questions', 'q4', 'criteria', 'a', 'dict[str,any]'], msg: 'Input should be a valid dictionary', input: 5 },
      { type: 'list_type', loc: ['body', 'questions', 'q4', 'criteria', 'a', 'list[any]'], msg: 'Input should be a valid list', input: 5 },
    ]);
  });

  it('score criteria: not a list, empty, a null level; bad instructions; noul criteria not an object', () => {
    const detail = detailOf({
      state: 's',
      model: 'm',
      questions: {
        s1: { type: 'score', criteria: { a: 1 } },
        s2: { type: 'score', criteria: [] },
        s3: { type: 'score', criteria: ['low', null], instructions: 7 },
        n1: { type: 'noul', criteria: 'yes' },
      },
    });
    expect(detail).toEqual([
      { type: 'list_type', loc: ['body', 'questions', 's1', 'criteria'], msg: 'Input should be a valid list', input: { a: 1 } },
      {
        type: 'too_short',
        loc: ['body', 'questions', 's2', 'criteria'],
        msg: 'List should have at least 1 item after validation, not 0',
        input: [],
        ctx: { field_type: 'List', min_length: 1, actual_length: 0 },
      },
      { type: 'string_type', loc: ['body', 'questions', 's3', 'instructions', 'str'], msg: 'Input should be a valid string', input: 7 },
      { type: 'dict_type', loc: ['body', 'questions', 's3', 'instructions', 'dict[str,any]'], msg: 'Input should be a valid dictionary', input: 7 },
      { type: 'list_type', loc: ['body', 'questions', 's3', 'instructions', 'list[any]'], msg: 'Input should be a valid list', input: 7 },
      { type: 'string_type', loc: ['body', 'questions', 's3', 'criteria', 1, 'str'], msg: 'Input should be a valid string', input: null },
      { type: 'dict_type', loc: ['body', 'questions', 's3', 'criteria', 1, 'dict[str,any]'], msg: 'Input should be a valid dictionary', input: null },
      { type: 'list_type', loc: ['body', 'questions', 's3', 'criteria', 1, 'list[any]'], msg: 'Input should be a valid list', input: null },
      { type: 'model_attributes_type', loc: ['body', 'questions', 'n1', 'criteria'], msg: 'Input should be a valid dictionary or object to extract fields from', input: 'yes' },
    ]);
  });

  it('accepts 16 questions and 32 criteria; a question named __proto__ stays a name', () => {
    const levels = Array.from({ length: 32 }, (_, i) => `level ${i}`);
    const questions = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`q${i}`, { type: 'score', criteria: levels }]));
    expect(readDecisionRequest({ state: 's', model: 'm', questions }).questions.size).toBe(16);
    const req = readDecisionRequest(JSON.parse('{"state":"s","model":"m","questions":{"__proto__":{"type":"noul"}}}'));
    expect([...req.questions.keys()]).toEqual(['__proto__']);
  });

  it('malformed JSON is a 422 json_invalid at the character position of the fault, with its line, column and reason', () => {
    const detailOf = (text: string) => {
      const http = appErrorToHttp(malformedJson(text));
      expect(http.status).toBe(422);
      return (http.body as { detail: Array<Record<string, unknown>> }).detail;
    };
    expect(detailOf('{"a" 1}')).toEqual([
      { type: 'json_invalid', loc: ['body', 5], msg: 'JSON decode error', input: {}, ctx: { error: "line 1, column 6: Expected ':' after the property name, found '1'" } },
    ]);
    expect(detailOf('{"state": "😀",\n "x": }')).toEqual([
      { type: 'json_invalid', loc: ['body', 21], msg: 'JSON decode error', input: {}, ctx: { error: "line 2, column 7: Expected a value, found '}'" } },
    ]);
  });
});
