/** A call's labels from every source: the header, the body (per wire) and the key's default tags. */
import { describe, expect, it } from 'vitest';
import { callLabelsOf, headerTags, anthropicLabels, openAiLabels } from '../../src/wire/call-labels.js';
import { chatCompletionsWire } from '../../src/wire/chat-completions/index.js';
import { messagesWire } from '../../src/wire/messages/index.js';
import { moderationsWire } from '../../src/wire/moderations/index.js';
import { isAppError } from '../../src/domain/shared/errors.js';

const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (err) {
    if (isAppError(err)) return { status: err.kind, message: err.message, param: err.param };
    throw err;
  }
  throw new Error('not refused');
};

describe('call labels', () => {
  it("merge the header's tags, the body's and the key's defaults, in that order, without duplicates", () => {
    const body = { metadata: { tags: 'b, shared' }, user: 'alice' };
    expect(callLabelsOf(chatCompletionsWire, body, headerTags('h,shared'), { tags: ['key-default', 'h'] })).toEqual({
      tags: ['h', 'shared', 'b', 'key-default'],
      endUser: 'alice',
    });
    expect(callLabelsOf(chatCompletionsWire, {}, [], { tags: ['key-default'] })).toEqual({ tags: ['key-default'] });
    expect(callLabelsOf(chatCompletionsWire, {}, [], undefined)).toEqual({});
  });

  it('the key adds its defaults beyond the 16 a call may name itself', () => {
    const sixteen = Array.from({ length: 16 }, (_, i) => `t${i}`);
    expect(callLabelsOf(chatCompletionsWire, {}, sixteen, { tags: ['k1', 'k2'] }).tags).toHaveLength(18);
  });

  it('a wire without labels takes the header and key tags only', () => {
    expect(callLabelsOf(moderationsWire, { metadata: { tags: 'ignored' }, user: 'x' }, ['h'], undefined)).toEqual({ tags: ['h'] });
    expect(callLabelsOf(messagesWire, { metadata: { user_id: 'u-1' } }, [], { tags: ['k'] })).toEqual({ tags: ['k'], endUser: 'u-1' });
  });

  it('reads OpenAI and Anthropic bodies as their references name the fields', () => {
    expect(openAiLabels({ safety_identifier: 'hashed', user: 'old' })).toEqual({ tags: [], endUser: 'hashed' });
    expect(openAiLabels({ user: '', metadata: { tags: ['x'] } })).toEqual({ tags: ['x'] });
    expect(anthropicLabels({ metadata: { user_id: null } })).toEqual({});
  });

  it('refuses bad values naming the header or field', () => {
    expect(refusal(() => headerTags('a,b c'))).toEqual({ status: 'invalid_request', message: 'x-sluice-tags: a tag may hold only letters, digits and . _ : / = - (got "b c")', param: 'x-sluice-tags' });
    expect(refusal(() => openAiLabels({ metadata: { tags: ['ok', 3] } }))).toEqual({
      status: 'invalid_request',
      message: 'metadata.tags must be a comma-separated string or an array of strings',
      param: 'metadata.tags',
    });
    expect(refusal(() => openAiLabels({ safety_identifier: 42 }))).toEqual({ status: 'invalid_request', message: 'safety_identifier must be a string', param: 'safety_identifier' });
    expect(refusal(() => anthropicLabels({ metadata: { user_id: 'u'.repeat(513) } }))).toEqual({
      status: 'invalid_request',
      message: 'metadata.user_id must be at most 512 characters',
      param: 'metadata.user_id',
    });
  });
});
