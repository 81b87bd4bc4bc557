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
  render(messages: readonly ChatMessage[]): { text: string; opensReasoning: boolean };
}

export function chatTemplate(source: string | undefined, bosToken: string | null, eosToken: string | null): ChatTemplate {
  const template = new Template(source ?? CHATML);
  return {
    render(messages) {
      const text = template.render({
        messages: messages.map((m) => ({ role: m.role, content: m.content })),
        add_generation_prompt: true,
        bos_token: bosToken ?? '',
        eos_token: eosToken ?? '',
      });
      const open = text.lastIndexOf('<think>');
      return { text, opensReasoning: open >= 0 && text.indexOf('</think>', open) < 0 };
    },
  };
}
