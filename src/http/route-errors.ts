/**
 * A route answers its errors in its wire's format (src/wire/error-format.ts): it declares
 * it in its route config, `config: { wireErrors }`. Without one, OpenAI's envelope.
 */
import type { WireErrorFormat } from '../wire/error-format.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The error envelope and stream error frame of the wire this route serves. */
    wireErrors?: WireErrorFormat;
  }
}

export type { WireErrorFormat };
