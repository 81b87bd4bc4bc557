/** The inference services, built once by the composition and shared by routes and workers. */
import { ChatCompletionsService, type InferenceServiceDeps } from './chat-completions.service.js';
import { CompletionsService } from './completions.service.js';
import { EmbeddingsService } from './embeddings.service.js';
import { ModerationsService } from './moderations.service.js';
import { ResponsesService } from '../responses/responses.service.js';

export interface InferenceServices {
  chatCompletions: ChatCompletionsService;
  completions: CompletionsService;
  responses: ResponsesService;
  embeddings: EmbeddingsService;
  moderations: ModerationsService;
}

export function createInferenceServices(deps: InferenceServiceDeps): InferenceServices {
  return {
    chatCompletions: new ChatCompletionsService(deps),
    completions: new CompletionsService(deps),
    responses: new ResponsesService(deps),
    embeddings: new EmbeddingsService(deps),
    moderations: new ModerationsService(deps),
  };
}

export type { InferenceServiceDeps };
