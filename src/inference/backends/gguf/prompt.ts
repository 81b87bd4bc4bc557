/**
 * The prompt of a chat, rendered with the model's own chat template (the GGUF's
 * `tokenizer.chat_template`, Jinja, through @huggingface/jinja), or ChatML when the file
 * has none. Says whether the template leaves the answer inside an open <think>.
 */
import { Template } from '@huggingface/jinja';
import type { ChatMessage } from '../../../domain/models/inference-backend.port.js';

const CHATML =
  "{%- for message in messages -%}{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' -}}{%- endfor -%}" +
  "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}";

export interface ChatTemplate {
  /** `tools` (the request's, as sent) reach templates that describe tools to the model. */
  render(messages: readonly ChatMessage[], tools?: unknown): { text: string; opensReasoning: boolean };
}

const parsedOr = (text: unknown): unknown => {
  try {
    return typeof text === 'string' ? JSON.parse(text) : text;
  } catch {
    return text;
  }
};

/**
 * A message as templates read it. An assistant's tool calls go in `tool_calls` (arguments
 * as objects, as Hugging Face templates expect them) and, for templates that do not render
 * them, as its content: the calls in the form the tool grammar generates.
 */
function templateMessage(m: ChatMessage, rendersToolCalls: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { role: m.role, content: m.content };
  if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
  if (m.name !== undefined) out.name = m.name;
  if (!m.tool_calls?.length) return out;
  const calls = m.tool_calls.map((c) => {
    const fn = (c.function ?? {}) as { name?: unknown; arguments?: unknown };
    return { id: c.id, type: 'function', function: { name: fn.name, arguments: parsedOr(fn.arguments) } };
  });
  out.tool_calls = calls;
  if (m.content === '' && !rendersToolCalls) out.content = calls.map((c) => JSON.stringify({ name: c.function.name, arguments: c.function.arguments })).join('\n');
  return out;
}

export function chatTemplate(source: string | undefined, bosToken: string | null, eosToken: string | null): ChatTemplate {
  const template = new Template(source ?? CHATML);
  const rendersToolCalls = source?.includes('tool_calls') === true;
  return {
    render(messages, tools) {
      const text = template.render({
        messages: messages.map((m) => templateMessage(m, rendersToolCalls)),
        ...(Array.isArray(tools) && tools.length > 0 ? { tools } : {}),
        add_generation_prompt: true,
        bos_token: bosToken ?? '',
        eos_token: eosToken ?? '',
      });
      const open = text.lastIndexOf('<think>');
      return { text, opensReasoning: open >= 0 && text.indexOf('</think>', open) < 0 };
    },
  };
}
