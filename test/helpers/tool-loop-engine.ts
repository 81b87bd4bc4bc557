/**
 * A fake engine behaviour for tool loops, as an engine with a tool-calling model behaves:
 * while the user's last turn has no tool result it answers with `call`; once a `tool`
 * message follows the last user message it answers `answer` (a system message may come
 * after the tool result, as Claude Code sends one with each turn). JSON or SSE, as the request asks (the stream
 * ends with a usage chunk when `stream_options.include_usage` is set).
 *
 *   upstream.setDefault('/chat/completions', toolLoop({ id: 'call_oslo', name: 'weather', arguments: '{"city":"Oslo"}' }, 'It is 21 degrees.'));
 *
 * With `reasoning`, the turn that calls the tool first thinks aloud, as a reasoning model
 * served by vLLM does: `reasoning_content` on the message, or streamed as its own deltas
 * before the call. With `answeredAnywhere`, the call counts as answered once a tool message
 * for its id is anywhere in the conversation (Claude Code follows a ToolSearch result with
 * user text in the same turn, so the tool message is not after the last user message).
 */
import { chatCompletionBody, DEFAULT_CHAT, streamChunk, toolCallDeltas, wireUsage, wordsOf, type FakeToolCall } from './fake-upstream-answers.js';
import { handler, type Behavior } from './fake-upstream.js';

export function toolLoop(call: FakeToolCall, answer: string, options: { reasoning?: string; answeredAnywhere?: boolean } = {}): Behavior {
  let sequence = 0;
  return handler((req, res) => {
    const messages: Array<{ role?: string; tool_call_id?: string }> = Array.isArray(req.body?.messages) ? req.body.messages : [];
    const lastUser = messages.findLastIndex((m) => m.role === 'user');
    const answered = options.answeredAnywhere
      ? messages.some((m) => m.role === 'tool' && m.tool_call_id === call.id)
      : messages.slice(lastUser + 1).some((m) => m.role === 'tool');
    const reasoning = answered ? null : (options.reasoning ?? null);
    const reply = answered ? { ...DEFAULT_CHAT, content: answer } : { ...DEFAULT_CHAT, reasoning, toolCalls: [call] };
    if (req.body?.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(chatCompletionBody(reply, req.body, ++sequence)));
      return;
    }
    const model = String(req.body?.model ?? '');
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const write = (chunk: string | Record<string, unknown>) => res.write(`data: ${JSON.stringify(streamChunk(model, chunk))}\n\n`);
    for (const words of reasoning ? wordsOf(reasoning) : []) write({ choices: [{ index: 0, delta: { reasoning_content: words }, finish_reason: null }] });
    for (const chunk of answered ? wordsOf(answer) : toolCallDeltas([call])) write(chunk);
    write({ choices: [{ index: 0, delta: {}, finish_reason: answered ? 'stop' : 'tool_calls' }] });
    if (req.body?.stream_options?.include_usage) write({ choices: [], usage: wireUsage(DEFAULT_CHAT.usage) });
    res.end('data: [DONE]\n\n');
  });
}
