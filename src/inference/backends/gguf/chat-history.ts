/**
 * A conversation as node-llama-cpp's chat history, for function calling (functions.ts):
 * the chat wrapper renders it in the model's own format, function calls and their
 * results included.
 *
 * OpenAI's wire splits a turn with calls into an assistant message with `tool_calls` and
 * one `tool` message per call (by `tool_call_id`); node-llama-cpp keeps a call and its
 * result together in the model's response. An assistant message that follows tool results
 * continues that same response (as node-llama-cpp's own sessions record a turn in which
 * the model called functions and then answered), and a history that ends with tool
 * results ends inside the model's response, which the generation continues; any other
 * history gets a new response (a closing assistant message is a turn of its own).
 */
import type { ChatMessage } from '../../../domain/models/inference-backend.port.js';
import type { ChatHistoryItem, ChatModelFunctionCall } from './llama-api.js';

type ModelResponse = Extract<ChatHistoryItem, { type: 'model' }>;

/** Arguments and results as JSON values where they parse (wrappers render them as JSON), else the text. */
const parsedOr = (text: unknown): unknown => {
  try {
    return typeof text === 'string' ? JSON.parse(text) : text;
  } catch {
    return text;
  }
};

function functionCallOf(call: Record<string, unknown>): ChatModelFunctionCall {
  const fn = (call.function ?? {}) as { name?: unknown; arguments?: unknown };
  // A call left without a `tool` message answering it renders with a null result.
  return { type: 'functionCall', name: typeof fn.name === 'string' ? fn.name : '', params: parsedOr(fn.arguments) ?? {}, result: null };
}

export function chatHistoryOf(messages: readonly ChatMessage[]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = [];
  /** The calls of the model response being built, by their ids (for the tool messages that answer them). */
  let pending = new Map<string, ChatModelFunctionCall>();
  let afterResults = false;
  for (const m of messages) {
    if (m.role === 'tool') {
      const call = m.tool_call_id === undefined ? undefined : pending.get(m.tool_call_id);
      if (call) {
        call.result = parsedOr(m.content);
        afterResults = true;
        continue;
      }
      // A result whose call is not in the conversation (truncated away, say) is still the user's to show.
      history.push({ type: 'user', text: m.content });
    } else if (m.role === 'assistant') {
      const last = history.at(-1);
      const response: ModelResponse = afterResults && last?.type === 'model' ? last : { type: 'model', response: [] };
      if (response !== last) {
        history.push(response);
        pending = new Map();
      }
      if (m.content !== '') response.response.push(m.content);
      for (const call of m.tool_calls ?? []) {
        const item = functionCallOf(call);
        response.response.push(item);
        if (typeof call.id === 'string') pending.set(call.id, item);
      }
    } else {
      history.push({ type: m.role, text: m.content });
    }
    afterResults = false;
  }
  // The answer to generate: a new model response, unless the history ends inside one (after tool results).
  if (!afterResults) history.push({ type: 'model', response: [] });
  return history;
}
