/** A validated text-completion body (src/wire/completions/body.ts) → the CompletionRequest the domain runs. */
import type { CompletionRequest } from '../../domain/completions/completion-call.js';
import type { CompletionRequestBody } from './body.js';
import { samplingOf } from '../chat-completions/mapper.js';

export function completionRequestOf(body: CompletionRequestBody): CompletionRequest {
  const fields = samplingOf(body);
  delete fields.prompt;
  return {
    model: body.model,
    prompt: body.prompt,
    suffix: body.suffix ?? null,
    fields,
    stream: body.stream === true,
    includeUsage: body.stream_options?.include_usage === true,
  };
}
