/**
 * `role: "system"` messages inside `messages` (the SDK's BetaSystemMessageParam), which
 * Claude Code 2.1.x sends on every turn: through `@anthropic-ai/sdk`'s beta client, each
 * reaches the engine as a system message where it stands, a tool result may follow one,
 * and a block other than text in one is refused in Anthropic's envelope, naming it.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startInferenceEnv, type InferenceEnv } from '../inference/setup.js';

let env: InferenceEnv;
let client: Anthropic;

beforeAll(async () => {
  env = await startInferenceEnv();
});
afterAll(async () => env.close());
beforeEach(async () => {
  env.upstream.reset();
  const tenant = await env.server.newTenant();
  client = new Anthropic({ baseURL: env.server.baseUrl, apiKey: tenant.key, maxRetries: 0 });
});

const engineMessages = () => env.upstream.requests.filter((r) => r.path === '/chat/completions').map((r) => r.body.messages);

describe('role "system" messages in messages', () => {
  it('reach the engine as system messages where they stand, a string or text blocks', async () => {
    const message = await client.beta.messages.create({
      model: 'gpt-oss-120b',
      max_tokens: 100,
      system: 'You are terse.',
      messages: [
        { role: 'user', content: 'Hello' },
        { role: 'system', content: [{ type: 'text', text: '# Environment' }, { type: 'text', text: 'cwd: /tmp/work', cache_control: { type: 'ephemeral' } }] },
        { role: 'system', content: 'Answer in French.' },
      ],
    });
    expect(message.content.map((block) => (block.type === 'text' ? block.text : block.type))).toEqual(['Hello from the fake upstream.']);
    expect(engineMessages()).toEqual([
      [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Hello' },
        { role: 'system', content: '# Environment\ncwd: /tmp/work' },
        { role: 'system', content: 'Answer in French.' },
      ],
    ]);
  });

  it('a tool result may follow one: the call stays open across it', async () => {
    await client.beta.messages.create({
      model: 'gpt-oss-120b',
      max_tokens: 100,
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Oslo' } }] },
        { role: 'system', content: '<total_tokens>1000 tokens left</total_tokens>' },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '21 degrees' }] },
      ],
      tools: [{ name: 'weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
    });
    expect(engineMessages()[0]!.map((m: any) => m.role)).toEqual(['user', 'assistant', 'system', 'tool']);
  });

  it('a block other than text in one is a 400 naming it; the engine is not called', async () => {
    const error = await client.beta.messages
      .create({
        model: 'gpt-oss-120b',
        max_tokens: 100,
        messages: [
          { role: 'user', content: 'Hello' },
          { role: 'system', content: [{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }] as any },
        ],
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'messages[1].content[0].type: a system message carries text blocks only, not image' },
    });
    expect(engineMessages()).toEqual([]);
  });
});
