/** OpenAI-compatible engines and the hosted presets (OpenAI, Groq, Together, …): `{base_url}/chat/completions` with a bearer key. */
import { bearer, type HttpEndpoint } from '../../endpoint.js';
import { upstreamHttpError } from '../../openai-errors.js';

export const openaiEndpoint: HttpEndpoint = {
  path: (operation) => operation,
  headers: bearer,
  errorOf: upstreamHttpError,
  modelsPath: () => '/models',
  notFoundHint: 'check that it ends in /v1',
};
