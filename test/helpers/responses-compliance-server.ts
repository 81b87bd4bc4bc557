/**
 * A local Sluice in front of a fake chat engine that calls tools and streams, for running
 * the Open Responses compliance suite against /v1/responses (docs/responses.md):
 *
 *   npx tsx test/helpers/responses-compliance-server.ts
 *   # prints the base URL and an API key; stop with Ctrl-C
 *
 * The engine answers like a reasoning chat model behind vLLM: it reasons first
 * (`reasoning_content`), then, when the request offers tools (and the conversation does
 * not end with a tool's result, and tool_choice is not none) it calls the first one with
 * arguments its schema asks for; otherwise it answers text. It streams when asked, in
 * several chunks, with usage.
 */
import type { ServerResponse } from 'node:http';
import { handler, startFakeUpstream, type RecordedRequest } from './fake-upstream.js';
import { startTestServer } from './harness.js';

type Json = Record<string, any>;

/** Arguments for a function's parameters: a string for each required property. */
function argumentsFor(parameters: Json | undefined): string {
  const args: Json = {};
  for (const name of (parameters?.required as string[] | undefined) ?? []) args[name] = name === 'location' ? 'San Francisco, CA' : 'example';
  return JSON.stringify(args);
}

function answerOf(body: Json): { content: string | null; toolCall: Json | null } {
  const messages = (body.messages as Json[] | undefined) ?? [];
  const tools = (body.tools as Json[] | undefined) ?? [];
  const afterTool = messages.at(-1)?.role === 'tool';
  if (tools.length > 0 && !afterTool && body.tool_choice !== 'none') {
    const fn = tools[0]!.function as Json;
    return { content: null, toolCall: { id: `call_${Date.now().toString(36)}`, type: 'function', function: { name: fn.name, arguments: argumentsFor(fn.parameters) } } };
  }
  return { content: afterTool ? 'It is 64 degrees and clear in San Francisco.' : 'Hello there, friend! One, two, three, four, five.', toolCall: null };
}

const usage = { prompt_tokens: 20, completion_tokens: 12, total_tokens: 32 };
const REASONING = 'The user asked something simple; answer it directly.';

function respond(req: RecordedRequest, res: ServerResponse): void {
  const body = req.body as Json;
  const { content, toolCall } = answerOf(body);
  const finish = toolCall ? 'tool_calls' : 'stop';
  if (body.stream !== true) {
    res.writeHead(200, { 'content-type': 'application/json' });
    const message = { role: 'assistant', content, reasoning_content: REASONING, ...(toolCall ? { tool_calls: [toolCall] } : {}) };
    res.end(JSON.stringify({ id: 'chatcmpl-c', object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message, finish_reason: finish }], usage }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta: Json, finishReason: string | null = null) =>
    res.write(`data: ${JSON.stringify({ id: 'chatcmpl-c', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`);
  for (const word of REASONING.match(/\S+\s*/g)!) chunk({ reasoning_content: word });
  if (toolCall) {
    const args = toolCall.function.arguments as string;
    chunk({ role: 'assistant', tool_calls: [{ index: 0, id: toolCall.id, type: 'function', function: { name: toolCall.function.name, arguments: '' } }] });
    chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(0, 5) } }] });
    chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(5) } }] });
  } else {
    for (const word of content!.match(/\S+\s*/g)!) chunk({ content: word });
  }
  chunk({}, finish);
  res.write(`data: ${JSON.stringify({ id: 'chatcmpl-c', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [], usage })}\n\n`);
  res.end('data: [DONE]\n\n');
}

const engine = await startFakeUpstream();
engine.setDefault('/chat/completions', handler(respond));
const sluice = await startTestServer({
  env: { LOG_LEVEL: 'silent' },
  yaml: `models:\n  gpt-oss-120b: { backend: openai, base_url: "${engine.baseUrl}" }\n`,
});
const { key } = await sluice.newTenant({ balanceUsd: 100 });
console.log(`base URL: ${sluice.baseUrl}/v1`);
console.log(`API key:  ${key}`);
console.log('model:    gpt-oss-120b');
const stop = async () => {
  await sluice.close();
  await engine.close();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
